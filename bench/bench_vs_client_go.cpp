// bench/bench_vs_client_go.cpp
//
// kinformer's informer against client-go's (../shared/bin/client-go-peer, a static
// build of k8s.io/client-go v0.26.15's SharedInformer with a counting handler;
// ../shared/peers/client-go/README.md), both following the same embedded API server
// in the same run (issue 29).
//
// The server and the writer run in this process; each informer is its own child
// process, so their CPU and memory are read from /proc apart from the server's and
// the writer's (bench/vs_client_go/process_stats.hpp): ours is this binary
// re-executed as a counting informer (bench/vs_client_go/counting_informer.hpp), the
// peer runs with --stamp-annotation. Both start together and follow the same
// stream. Phases, one JSON line each:
//   idle    both informers synced on 1 KB ConfigMaps, nothing changes, for
//           --idle-seconds: CPU as a % of one core over that window.
//   rate    --seconds of updates at each of --rates writes/s over --keys ConfigMaps
//           of 1 KB, each stamped at its commit with CLOCK_REALTIME nanoseconds in the
//           bench.kinformer.io/sent-ns annotation; both handlers take now - stamp on
//           entry. CPU over the writes plus 1 s for the tail, RSS at its end, latency
//           p50/p99 (nearest rank) over every stamped update.
//   list    an initial list of each of --lists pods of 1 KB (paged by 500, as both
//           clients ask): CPU from process start (ours: /proc/PID/stat when its
//           handler has seen every object; the peer exits at that point, so its own
//           getrusage over the same interval from its JSON line) and peak RSS (VmHWM,
//           the peer's rss_list_peak_bytes). No latency (listed objects carry their age).
//   relist  after the largest list, one forced relist (a 410 on the open watch):
//           steady RSS (after malloc_trim / the peer's FreeOSMemory) and the relist's
//           peak RSS.
// cpu_ratio = client-go CPU / ours, memory_ratio = client-go RSS / ours; the
// goals (issue 29) are checked by reading these lines, not by the bench.
//
// Usage: `bench_vs_client_go --help` (the usage text below).
// --short is the CI form (about 20 s): idle 2 s, 100 and 1000 writes/s for 2 s,
// a list and relist of 2000 pods. Without the peer binary (--peer, else
// $KINFORMER_CLIENT_GO_PEER, else ../shared/bin/client-go-peer beside the source
// tree) the client-go fields are null and stderr says why.
// Output: one JSON object per line on stdout (style.md); progress on stderr.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/server.hpp"
#include "bench/vs_client_go/counting_informer.hpp"
#include "bench/vs_client_go/process_stats.hpp"
#include "bench/vs_client_go/stamped_writer.hpp"
#include "tests/support/child_process.hpp"
#include "runtime/help_option.hpp"

namespace {

using kinformer::bench::ProcessStats;
using kinformer::bench::read_process_stats;
using kinformer::testing::ChildProcess;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

constexpr const char* stamp_key = "bench.kinformer.io/sent-ns";

struct Options {
  std::vector<std::string> phases{"idle", "rate", "list", "relist"};
  std::vector<double> rates{100, 1000, 10000};
  double seconds = 10;
  double idle_seconds = 10;
  std::vector<std::size_t> lists{20000, 150000};
  std::size_t keys = 1000;
  std::size_t object_bytes = 1024;
  std::string peer;
  std::vector<std::string> wrap;  // a command our informer runs under (heaptrack, perf record ...)
  std::vector<std::string> caf;  // for our informer's actor system
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string default_peer() {
  if (const char* env = std::getenv("KINFORMER_CLIENT_GO_PEER")) return env;
  return std::string(KINFORMER_SOURCE_DIR) + "/../shared/bin/client-go-peer";
}

constexpr const char* usage =
    "usage: bench_vs_client_go [--short] [--phases idle,rate,list,relist] [--rates 100,1000,10000]\n"
    "         [--seconds 10] [--idle-seconds 10] [--lists 20000,150000] [--keys 1000]\n"
    "         [--object-bytes 1024] [--peer PATH] [--wrap-ours '/usr/bin/heaptrack -o /tmp/ours']\n"
    "         [--caf --scheduler.policy=sharing ...]\n"
    "--wrap-ours runs our informer under a profiler (the program by its full path); its CPU and RSS\n"
    "are then the wrapper's process, not the informer's.\n";

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  o.peer = default_peer();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--short") {
      o.rates = {100, 1000};
      o.seconds = 2;
      o.idle_seconds = 2;
      o.lists = {2000};
      o.keys = 200;
    } else if (arg == "--phases" && has_value) {
      o.phases = split(argv[++i]);
    } else if (arg == "--rates" && has_value) {
      o.rates.clear();
      for (const auto& r : split(argv[++i])) o.rates.push_back(std::stod(r));
    } else if (arg == "--seconds" && has_value) {
      o.seconds = std::stod(argv[++i]);
    } else if (arg == "--idle-seconds" && has_value) {
      o.idle_seconds = std::stod(argv[++i]);
    } else if (arg == "--lists" && has_value) {
      o.lists.clear();
      for (const auto& n : split(argv[++i])) o.lists.push_back(std::stoul(n));
    } else if (arg == "--keys" && has_value) {
      o.keys = std::stoul(argv[++i]);
    } else if (arg == "--object-bytes" && has_value) {
      o.object_bytes = std::stoul(argv[++i]);
    } else if (arg == "--peer" && has_value) {
      o.peer = argv[++i];
    } else if (arg == "--wrap-ours" && has_value) {
      o.wrap = split_words(argv[++i]);
    } else if (arg == "--caf") {
      o.caf.assign(argv + i + 1, argv + argc);
      break;
    } else {
      std::fprintf(stderr, "bench_vs_client_go: bad or incomplete option '%s'\n%s", arg.c_str(), usage);
      return std::nullopt;
    }
  }
  return o;
}

bool wanted(const Options& o, const char* phase) {
  for (const auto& p : o.phases)
    if (p == phase) return true;
  return false;
}

Json rounded(double x, int digits = 2) {
  if (!std::isfinite(x)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

Json ratio(const Json& theirs, const Json& ours) {
  if (!theirs.is_number() || !ours.is_number() || ours.get<double>() <= 0) return nullptr;
  return rounded(theirs.get<double>() / ours.get<double>());
}

Json mb(double bytes) { return rounded(bytes / (1024.0 * 1024.0), 1); }

// Polls `ready` every 10 ms for up to `timeout`; false (with `what` on stderr) on timeout.
template <class Ready>
bool wait_for(Ready ready, std::chrono::seconds timeout, const std::string& what) {
  const auto end = Clock::now() + timeout;
  while (!ready()) {
    if (Clock::now() > end) {
      std::fprintf(stderr, "bench_vs_client_go: %s after %llds\n", what.c_str(),
                   static_cast<long long>(timeout.count()));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The JSON object on the `index`-th line of `out` starting with '{', or null.
Json json_line(const std::string& out, int index = 0) {
  std::stringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{' && index-- == 0) return Json::parse(line, nullptr, false);
  return nullptr;
}

class Bench {
 public:
  Bench(Options options, kinformer::apiserver::Server& server, std::string dir)
      : o_(std::move(options)), server_(server), dir_(std::move(dir)),
        writer_(server, stamp_key, o_.object_bytes) {
    struct stat st {};
    peer_ok_ = ::stat(o_.peer.c_str(), &st) == 0 && (st.st_mode & S_IXUSR);
    if (!peer_ok_)
      std::fprintf(stderr,
                   "bench_vs_client_go: no client-go peer at %s (build it with ../shared/peers/client-go/build.sh, "
                   "or pass --peer PATH): its fields are null, ours are measured\n",
                   o_.peer.c_str());
  }

  void setup_line() const {
    Json line{{"bench", "setup"},
              {"build", KINFORMER_BUILD_TYPE},
              {"cores", std::thread::hardware_concurrency()},
              {"load_average_1m", rounded(kinformer::bench::load_average_1m())},
              {"peer", peer_ok_ ? Json(o_.peer) : Json(nullptr)},
              {"caf_options", o_.caf}};
    emit(line);
  }

  // idle (count == 0) or a rate phase.
  bool follow(const std::string& phase, double rate, std::size_t count, double window_s) {
    const std::string ns = phase + "-" + std::to_string(static_cast<long>(rate)) + "-" + std::to_string(runs_++);
    writer_.create_namespace(ns);
    writer_.create_configmaps(ns, o_.keys);
    const std::size_t expect = o_.keys + count + 1;  // + the marker that ends both
    auto watching = server_.stats().watches_active;
    Informers informers = start(ns, "configmaps", expect, false);
    if (!wait_for([&] { return informers.ours->out().find("synced") != std::string::npos; },
                  std::chrono::seconds(120), "our informer did not sync"))
      return false;
    const auto needed = watching + 1 + (informers.peer ? 1 : 0);
    if (!wait_for([&] { return server_.stats().watches_active >= needed; }, std::chrono::seconds(120),
                  "the informers' watches did not open"))
      return false;
    std::this_thread::sleep_for(std::chrono::seconds(1));  // start-up work (the peer's first GC) settles

    const auto t0 = Clock::now();
    const ProcessStats ours0 = read_process_stats(informers.ours->pid());
    const ProcessStats peer0 = informers.peer ? read_process_stats(informers.peer->pid()) : ProcessStats{};
    double achieved = 0;
    if (count > 0) {
      std::fprintf(stderr, "%s: %zu updates at %.0f/s\n", phase.c_str(), count, rate);
      achieved = writer_.update_at_rate(ns, o_.keys, count, rate);
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the last events' way to both handlers
    } else {
      std::fprintf(stderr, "%s: %.0f s without changes\n", phase.c_str(), window_s);
      std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    }
    const ProcessStats ours1 = read_process_stats(informers.ours->pid());
    const ProcessStats peer1 = informers.peer ? read_process_stats(informers.peer->pid()) : ProcessStats{};
    const double window = std::chrono::duration<double>(Clock::now() - t0).count();
    writer_.update_at_rate(ns, o_.keys, 1, 1);  // the marker: both counts complete

    Json ours_report, peer_report;
    if (!finish(informers, ours_report, peer_report)) return false;
    const auto cpu_pct = [&](const ProcessStats& a, const ProcessStats& b) -> Json {
      if (!a.valid || !b.valid) return nullptr;
      return rounded((b.cpu_seconds - a.cpu_seconds) / window * 100.0, 3);
    };
    const auto switches = [&](const ProcessStats& a, const ProcessStats& b) -> Json {
      if (!a.valid || !b.valid || count == 0) return nullptr;
      return rounded(static_cast<double>(b.voluntary_switches + b.involuntary_switches - a.voluntary_switches -
                                         a.involuntary_switches) /
                     static_cast<double>(count));
    };
    const auto latency = [&](const Json& report, const char* key) -> Json {
      if (count == 0 || !report.is_object() || !report.contains(key)) return nullptr;
      return rounded(report[key].get<double>(), 0);
    };
    Json line{{"bench", "vs_client_go"},
              {"phase", phase},
              {"rate", rate},
              {"achieved_rate", rounded(achieved, 0)},
              {"seconds", rounded(window)},
              {"objects", o_.keys},
              {"object_bytes", writer_.object_bytes()},
              {"events", count}};
    line["kinformer_cpu_pct"] = cpu_pct(ours0, ours1);
    line["client_go_cpu_pct"] = cpu_pct(peer0, peer1);
    line["cpu_ratio"] = ratio(line["client_go_cpu_pct"], line["kinformer_cpu_pct"]);
    line["kinformer_rss_mb"] = mb(static_cast<double>(ours1.rss_bytes));
    line["client_go_rss_mb"] = peer1.valid ? mb(static_cast<double>(peer1.rss_bytes)) : Json(nullptr);
    line["memory_ratio"] = ratio(line["client_go_rss_mb"], line["kinformer_rss_mb"]);
    line["kinformer_p50_us"] = latency(ours_report, "latency_p50_us");
    line["kinformer_p99_us"] = latency(ours_report, "latency_p99_us");
    line["client_go_p50_us"] = latency(peer_report, "latency_p50_us");
    line["client_go_p99_us"] = latency(peer_report, "latency_p99_us");
    line["kinformer_switches_per_event"] = switches(ours0, ours1);
    line["client_go_switches_per_event"] = switches(peer0, peer1);
    line["load_average_1m"] = rounded(kinformer::bench::load_average_1m());
    emit(line);
    return true;
  }

  // An initial list of `objects` pods, then (relist) one forced relist of them.
  bool list(std::size_t objects, bool relist) {
    const std::string ns = "list-" + std::to_string(objects);
    std::fprintf(stderr, "list: creating %zu pods\n", objects);
    writer_.create_namespace(ns);
    writer_.create_pods(ns, objects);
    std::fprintf(stderr, "list: both informers list %zu pods\n", objects);
    Informers informers = start(ns, "pods", objects, relist);
    Json ours_report;
    if (!wait_for([&] { return (ours_report = json_line(informers.ours->out())).is_object(); },
                  std::chrono::seconds(600), "our informer did not see every listed pod"))
      return false;
    const ProcessStats ours = read_process_stats(informers.ours->pid());
    Json ours_relist;
    if (relist) {
      ::kill(informers.ours->pid(), SIGUSR1);
      if (!wait_for([&] { return (ours_relist = json_line(informers.ours->out(), 1)).is_object(); },
                    std::chrono::seconds(600), "our informer's relist did not finish"))
        return false;
    }
    Json unused, peer_report;
    if (!finish(informers, unused, peer_report)) return false;
    const bool peer = peer_report.is_object();

    Json line{{"bench", "vs_client_go"},
              {"phase", "list"},
              {"rate", nullptr},
              {"objects", objects},
              {"object_bytes", writer_.object_bytes()}};
    line["kinformer_seconds"] = rounded(ours_report["seconds"].get<double>(), 3);
    line["client_go_seconds"] = peer ? rounded(peer_report["seconds"].get<double>(), 3) : Json(nullptr);
    line["kinformer_cpu_s"] = rounded(ours.stat_cpu_seconds, 3);
    line["client_go_cpu_s"] =
        peer ? rounded(peer_report["cpu_user_s"].get<double>() + peer_report["cpu_sys_s"].get<double>(), 3)
             : Json(nullptr);
    // "% of a core" over each one's own list time, as the rate lines give it
    line["kinformer_cpu_pct"] = rounded(ours.stat_cpu_seconds / ours_report["seconds"].get<double>() * 100.0, 1);
    line["client_go_cpu_pct"] =
        peer ? rounded(line["client_go_cpu_s"].get<double>() / peer_report["seconds"].get<double>() * 100.0, 1)
             : Json(nullptr);
    line["cpu_ratio"] = ratio(line["client_go_cpu_s"], line["kinformer_cpu_s"]);
    line["kinformer_rss_mb"] = mb(static_cast<double>(ours.peak_rss_bytes));
    line["client_go_rss_mb"] = peer ? mb(peer_report["rss_list_peak_bytes"].get<double>()) : Json(nullptr);
    line["memory_ratio"] = ratio(line["client_go_rss_mb"], line["kinformer_rss_mb"]);
    for (const char* key : {"kinformer_p50_us", "kinformer_p99_us", "client_go_p50_us", "client_go_p99_us"})
      line[key] = nullptr;
    line["load_average_1m"] = rounded(kinformer::bench::load_average_1m());
    emit(line);
    if (!relist) return true;

    Json again{{"bench", "vs_client_go"},
               {"phase", "relist"},
               {"rate", nullptr},
               {"objects", objects},
               {"object_bytes", writer_.object_bytes()}};
    const double ours_steady = ours_relist["steady_rss_bytes"].get<double>();
    const double ours_peak = ours_relist["relist_peak_bytes"].get<double>();
    again["kinformer_steady_rss_mb"] = mb(ours_steady);
    again["kinformer_rss_mb"] = mb(ours_peak);
    again["kinformer_relist_ratio"] = rounded(ours_peak / ours_steady);
    const bool peer_relisted = peer && peer_report.contains("rss_relist_peak_bytes");
    const double peer_steady = peer_relisted ? peer_report["rss_after_sync_bytes"].get<double>() : 0;
    const double peer_peak = peer_relisted ? peer_report["rss_relist_peak_bytes"].get<double>() : 0;
    again["client_go_steady_rss_mb"] = peer_relisted ? mb(peer_steady) : Json(nullptr);
    again["client_go_rss_mb"] = peer_relisted ? mb(peer_peak) : Json(nullptr);
    again["client_go_relist_ratio"] = peer_relisted ? rounded(peer_peak / peer_steady) : Json(nullptr);
    again["memory_ratio"] = ratio(again["client_go_rss_mb"], again["kinformer_rss_mb"]);
    again["kinformer_relist_seconds"] = ours_relist["relist_seconds"];
    again["client_go_relist_seconds"] = peer_relisted ? peer_report["relist_seconds"] : Json(nullptr);
    for (const char* key : {"kinformer_cpu_pct", "client_go_cpu_pct", "cpu_ratio", "kinformer_p50_us",
                            "kinformer_p99_us", "client_go_p50_us", "client_go_p99_us"})
      again[key] = nullptr;
    again["load_average_1m"] = rounded(kinformer::bench::load_average_1m());
    emit(again);
    return true;
  }

 private:
  struct Informers {
    std::unique_ptr<ChildProcess> ours;
    std::unique_ptr<ChildProcess> peer;
  };

  Informers start(const std::string& ns, const std::string& resource, std::size_t expect, bool relist) {
    Informers informers;
    std::vector<std::string> args{"--counting-informer", server_.url(), resource, ns, std::to_string(expect),
                                  stamp_key};
    args.insert(args.end(), o_.caf.begin(), o_.caf.end());
    std::string program = std::filesystem::read_symlink("/proc/self/exe");
    if (!o_.wrap.empty()) {
      args.insert(args.begin(), program);
      args.insert(args.begin(), o_.wrap.begin() + 1, o_.wrap.end());
      program = o_.wrap.front();
    }
    const std::string base = dir_ + "/" + ns;
    informers.ours = std::make_unique<ChildProcess>(program, args, base + ".ours.out", base + ".ours.err");
    if (peer_ok_) {
      std::vector<std::string> peer_args{"--server",    server_.url(),         "--resource", resource,
                                         "--namespace", ns,                    "--expect",   std::to_string(expect),
                                         "--timeout",   "900",                 "--stamp-annotation", stamp_key};
      if (relist) peer_args.push_back("--relist");
      informers.peer = std::make_unique<ChildProcess>(o_.peer, peer_args, base + ".peer.out", base + ".peer.err");
    }
    return informers;
  }

  // Waits for both final JSON lines (ours: its first; the peer's at its exit), then
  // stops ours. False, with the reason on stderr, when one does not come.
  bool finish(Informers& informers, Json& ours, Json& peer) {
    if (!wait_for([&] { return (ours = json_line(informers.ours->out())).is_object(); }, std::chrono::seconds(600),
                  "our informer did not count every notification (stderr: " + informers.ours->err() + ")"))
      return false;
    if (informers.peer) {
      if (informers.peer->wait_exit(std::chrono::seconds(900)) != 0) {
        std::fprintf(stderr, "bench_vs_client_go: the peer failed: %s\n%s\n", informers.peer->out().c_str(),
                     informers.peer->err().c_str());
        return false;
      }
      peer = json_line(informers.peer->out());
    }
    informers.ours->stop();
    return true;
  }

  static void emit(const Json& line) {
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }

  const Options o_;
  kinformer::apiserver::Server& server_;
  const std::string dir_;
  kinformer::bench::StampedWriter writer_;
  bool peer_ok_ = false;
  int runs_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--counting-informer") == 0)
    return kinformer::bench::counting_informer_main(argc, argv);
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  auto options = parse(argc, argv);
  if (!options) return 2;
  std::signal(SIGPIPE, SIG_IGN);

  kinformer::apiserver::ServerOptions server_options;
  // Both watchers keep up at the rates here; a deep history keeps a slow start from a 410.
  server_options.watch_history = 1'000'000;
  server_options.watch_history_bytes = std::size_t{2} << 30;
  kinformer::apiserver::Server server(server_options);
  if (auto port = server.start(); !port) {
    std::fprintf(stderr, "bench_vs_client_go: %s\n", port.error().message.c_str());
    return 1;
  }
  char dir_template[] = "/tmp/bench_vs_client_go.XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (!dir) return 1;

  Bench bench(*options, server, dir);
  bench.setup_line();
  bool ok = true;
  if (ok && wanted(*options, "idle")) ok = bench.follow("idle", 0, 0, options->idle_seconds);
  if (wanted(*options, "rate"))
    for (double rate : options->rates)
      if (ok) ok = bench.follow("rate", rate, static_cast<std::size_t>(rate * options->seconds), 0);
  const bool relist = wanted(*options, "relist");
  if (wanted(*options, "list") || relist)
    for (std::size_t i = 0; ok && i < options->lists.size(); ++i)
      ok = bench.list(options->lists[i], relist && i + 1 == options->lists.size());
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
