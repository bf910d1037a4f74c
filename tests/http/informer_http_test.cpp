// Informers over real loopback HTTP against the embedded API server (issue 8,
// item 5): a paginated initial list of 10k objects, churn from another client,
// watch-history expiry with tombstones, and server restarts with and without its
// data file. The [any-storage] cases run on etcd too (tests/support/test_storage.hpp),
// where a server restart keeps etcd's data; the data-file cases are the memory store's.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <future>
#include <mutex>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "runtime/home_cpu.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/http/http_fixture.hpp"
#include "tests/support/test_storage.hpp"
#include "tests/support/thread_affinity.hpp"
#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::testing::cache_state;
using kinformer::testing::eventually;
using kinformer::testing::HttpFixture;
using kinformer::testing::make_client;
using kinformer::testing::server_state;
using kinformer::testing::TestServer;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

using kinformer::testing::configmaps_path;

using kinformer::testing::configmap_text;

std::uint16_t free_port() {
  TestServer probe;
  return probe.port();  // closed again when probe goes; the OS rarely hands it out at once
}

// A server on a free port that saves to `data_file` and keeps 20 events of watch history, so a
// test can restart it on the same port and outrun the history while the informer is away.
kinformer::apiserver::ServerOptions restartable_server(const std::string& data_file) {
  kinformer::apiserver::ServerOptions options;
  options.port = free_port();
  options.data_file = data_file;
  options.watch_history = 20;
  return options;
}

// Creates configmaps cm-0 … cm-(n-1).
template <class Server>
void add_configmaps(Server& server, int n) {
  for (int i = 0; i < n; ++i)
    REQUIRE(server.call("POST", configmaps_path, configmap_text("cm-" + std::to_string(i))).status == 201);
}

}  // namespace

TEST_CASE("an informer over HTTP pages through 10k objects then matches the server after churn",
          "[http][item-5][any-storage][integration]") {
  TestServer t;
  for (int i = 0; i < 10000; ++i)
    REQUIRE(t.server().call("POST", configmaps_path, configmap_text("cm-" + std::to_string(i))).status == 201);
  HttpFixture f;
  auto client = make_client(t.server().url());
  auto informer = f.informer(client, configmaps_path, 500);
  const auto requests_before = t.server().stats().requests;
  informer->run();
  REQUIRE(informer->wait_for_sync(60s));
  CHECK(informer->indexer().size() == 10000);
  CHECK(t.server().stats().requests - requests_before >= 20);  // 10000 / 500 pages
  CHECK(client->connections_opened() <= 2);                    // one kept-alive list connection + the watch

  // churn from a separate client: updates, deletes and creates
  auto writer = make_client(t.server().url());
  for (int i = 0; i < 300; ++i) {
    kinformer::http::Request update;
    update.method = "PATCH";
    update.target = configmaps_path + "/cm-" + std::to_string(i * 7);
    update.body = R"({"data":{"k":"changed-)" + std::to_string(i) + "\"}}";
    update.content_type = "application/merge-patch+json";
    auto r = writer->request_sync(update);
    REQUIRE(r);
    REQUIRE(r->status == 200);
  }
  for (int i = 0; i < 100; ++i) {
    auto r = writer->request_sync(
        {"DELETE", configmaps_path + "/cm-" + std::to_string(9999 - i), "", "application/json"});
    REQUIRE(r);
    REQUIRE(r->status == 200);
  }
  for (int i = 0; i < 100; ++i) {
    auto r =
        writer->request_sync({"POST", configmaps_path, configmap_text("new-" + std::to_string(i)), "application/json"});
    REQUIRE(r);
    REQUIRE(r->status == 201);
  }
  CHECK(writer->connections_opened() == 1);  // 500 requests over one kept-alive connection
  const auto expected = server_state(t.port(), configmaps_path);
  REQUIRE(expected.size() == 10000);
  eventually([&] { return cache_state(*informer) == expected; },
             "the cache to equal the server's list after churn");
  eventually([&] { return f.seen.last() == expected; },
             "the handler to have seen the final state of each object");
  informer->stop();
}

namespace {

// A server on the storage under test that the informer's watch falls behind: the server
// is stopped (the informer's watch breaks and its re-watches are refused), started again
// on the same port and storage (the data file, or etcd), and changes more than its watch
// history holds while the informer backs off. The informer must relist, with tombstones
// for what was deleted meanwhile.
// A server with 10 configmaps on the storage under test (the same storage, and etcd keys,
// for a server restarted with `options`), and an informer over HTTP synced with it.
struct FollowedServer {
  explicit FollowedServer(const std::string& data_file)
      : options([&] {
          auto placed = kinformer::testing::on_test_storage(restartable_server(data_file));
          REQUIRE(placed);
          return placed.value();
        }()),
        t(std::in_place, options) {
    add_configmaps(t->server(), 10);
    informer = f.informer(make_client("http://127.0.0.1:" + std::to_string(options.port)), configmaps_path);
    informer->run();
    REQUIRE(informer->wait_for_sync(30s));
    CHECK(informer->indexer().size() == 10);
  }
  ~FollowedServer() { informer->stop(); }

  const kinformer::apiserver::ServerOptions options;
  HttpFixture f;
  std::optional<TestServer> t;
  std::unique_ptr<kinformer::SharedInformer> informer;
};

void expect_relist_with_tombstones_after_restart(const std::string& data_file) {
  FollowedServer s(data_file);
  // Plain references, not a structured binding: the lambdas below capture them, which
  // clang before 16 rejects for bindings (the ASan build uses clang-14).
  const auto& options = s.options;
  auto& f = s.f;
  auto& t = s.t;
  auto& informer = s.informer;
  t.reset();
  t.emplace(options);
  // While the informer backs off: two deletions and more events than the history keeps.
  REQUIRE(t->server().call("DELETE", configmaps_path + "/cm-0").status == 200);
  REQUIRE(t->server().call("DELETE", configmaps_path + "/cm-1").status == 200);
  for (int round = 0; round < 5; ++round)
    for (int i = 2; i < 10; ++i)
      REQUIRE(t->server()
                  .call("PUT", configmaps_path + "/cm-" + std::to_string(i),
                        configmap_text("cm-" + std::to_string(i), "r" + std::to_string(round)))
                  .status == 200);
  const auto expected = server_state(t->port(), configmaps_path);
  eventually([&] { return cache_state(*informer) == expected; }, "the cache to converge after the restart");
  eventually(
      [&] {
        return f.seen.tombstones() == std::set<std::string>{"default/cm-0", "default/cm-1"};
      },
      "tombstones for the two objects deleted while the watch was away (a relist)");
  CHECK(f.seen.saw_error(Errc::gone));  // the re-watch was too old: 410, then the relist
  CHECK(f.seen.last() == expected);
}

}  // namespace

TEST_CASE("an informer relists with tombstones when its watch falls out of the server's history across a restart",
          "[http][item-5][any-storage][integration]") {
  char pattern[] = "/tmp/kinformer-http-data-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  // On etcd the data file is unused: the storage under test keeps the objects.
  expect_relist_with_tombstones_after_restart(kinformer::testing::test_storage() == "etcd" ? "" : dir + "/store.json");
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("an informer follows a server restarted without its data file", "[http][item-5][integration]") {
  char pattern[] = "/tmp/kinformer-http-data-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string data_file = dir + "/store.json";
  FollowedServer s(data_file);
  // Plain references, not a structured binding: the lambdas below capture them, which
  // clang before 16 rejects for bindings (the ASan build uses clang-14).
  const auto& options = s.options;
  auto& f = s.f;
  auto& t = s.t;
  auto& informer = s.informer;
  t.reset();
  std::system(("rm -f '" + data_file + "'*").c_str());  // the snapshot and any write-ahead log beside it
  t.emplace(options);  // an empty store whose resourceVersions start over
  REQUIRE(t->server().call("POST", configmaps_path, configmap_text("fresh")).status == 201);
  const auto expected = server_state(t->port(), configmaps_path);
  REQUIRE(expected.size() == 1);
  eventually([&] { return cache_state(*informer) == expected; },
             "the cache to converge on the new, empty server (a relist at resourceVersion \"\")");
  eventually([&] { return f.seen.tombstones().size() == 10; }, "tombstones for the 10 vanished objects");
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("a relist over HTTP keeps the cached object of every unchanged key and replaces the changed one",
          "[http][item-8][integration]") {
  char pattern[] = "/tmp/kinformer-http-reuse-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const auto options = restartable_server(dir + "/store.json");

  HttpFixture f;
  auto client = make_client("http://127.0.0.1:" + std::to_string(options.port));
  std::optional<TestServer> t(std::in_place, options);
  add_configmaps(t->server(), 10);
  auto informer = f.informer(client, configmaps_path, 3);  // pages of 3
  informer->run();
  REQUIRE(informer->wait_for_sync(30s));
  std::map<std::string, kinformer::ObjectPtr> before;
  for (const auto& object : informer->indexer().list()) before[std::string(object->key())] = object;
  REQUIRE(before.size() == 10);

  // The watch breaks. cm-9 then changes more often than the history keeps, on the same store served
  // at another port, so that the informer cannot re-watch between the writes: its resourceVersion
  // is too old once the server is back on its port, and only a relist can recover.
  t.reset();
  auto elsewhere = options;
  elsewhere.port = free_port();
  t.emplace(elsewhere);
  for (int round = 0; round < 25; ++round)
    REQUIRE(t->server()
                .call("PUT", configmaps_path + "/cm-9", configmap_text("cm-9", "r" + std::to_string(round)))
                .status == 200);
  t.reset();
  t.emplace(options);
  const auto expected = server_state(t->port(), configmaps_path);
  eventually([&] { return cache_state(*informer) == expected; }, "the cache to converge after the relist");
  CHECK(f.seen.saw_error(Errc::gone));  // the re-watch was too old: 410, then the relist
  for (int i = 0; i < 9; ++i) {
    const std::string key = "default/cm-" + std::to_string(i);
    CHECK(informer->indexer().get_by_key(key) == before.at(key));  // the relisted copy was dropped
  }
  CHECK(informer->indexer().get_by_key("default/cm-9") != before.at("default/cm-9"));
  informer->stop();
  t.reset();
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("list and watch send selectors and the watch-list parameters the embedded server honours",
          "[http][item-1][any-storage][integration]") {
  TestServer t;
  t.create_configmap("web-0", {{"app", "web"}});
  t.create_configmap("db-0", {{"app", "db"}});
  auto client = make_client(t.server().url());
  kinformer::http::HttpListWatch lw(client, configmaps_path);

  kinformer::ListOptions list_options;
  list_options.label_selector = "app=web";
  std::promise<kinformer::Result<kinformer::ObjectList>> listed;
  lw.list(list_options, [&](kinformer::Result<kinformer::ObjectList> r) { listed.set_value(std::move(r)); });
  auto list = listed.get_future().get();
  REQUIRE(list);
  REQUIRE(list->items.size() == 1);
  CHECK(list->items[0]->name() == "web-0");

  // watch-list: ADDED for the matching state, then the initial-events-end bookmark
  kinformer::WatchOptions watch_options;
  watch_options.send_initial_events = true;
  watch_options.resource_version_match = "NotOlderThan";
  watch_options.field_selector = "metadata.name=db-0";
  std::mutex mu;
  std::vector<kinformer::WatchEvent> events;
  auto watch = lw.watch(
      watch_options,
      [&](std::vector<kinformer::WatchEvent> batch) {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& e : batch) events.push_back(std::move(e));
      },
      [](kinformer::Result<void>) {});
  eventually(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return events.size() >= 2;
      },
      "the watch-list's ADDED and its initial-events-end bookmark");
  watch->stop();
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(events.size() == 2);
  CHECK(events[0].type == kinformer::WatchEventType::added);
  CHECK(events[0].object->name() == "db-0");
  CHECK(events[1].type == kinformer::WatchEventType::bookmark);
  CHECK(events[1].initial_events_end);
}

TEST_CASE("the client's I/O thread and one scheduler worker share the home CPU, and the other worker runs anywhere",
          "[http][home_cpu][integration]") {
  REQUIRE(std::thread::hardware_concurrency() >= 2);  // with one CPU every thread is "pinned"
  TestServer t;
  HttpFixture f;
  auto client = make_client(t.server().url());
  auto informer = f.informer(client, configmaps_path);
  informer->run();
  REQUIRE(informer->wait_for_sync(30s));
  add_configmaps(t.server(), 3);
  eventually([&] { return f.seen.last().size() == 3; }, "the handler to see the three configmaps");
  const int home = kinformer::home_cpu::chosen();
  REQUIRE(home >= 0);
  // Worker 0 pins itself once it has taken a job after the I/O thread chose the CPU. CAF 0.17
  // names its scheduler workers "caf.multiplexer" (caf/scheduler/worker.hpp).
  eventually(
      [&] {
        std::size_t io_threads = 0, io_pinned = 0, workers = 0, workers_pinned = 0;
        for (const auto& thread : kinformer::testing::thread_pins(home)) {
          if (thread.name == "kinformer.io") {
            ++io_threads;
            io_pinned += thread.pinned ? 1 : 0;
          } else if (thread.name == "caf.multiplexer") {
            ++workers;
            workers_pinned += thread.pinned ? 1 : 0;
          }
        }
        return io_threads >= 1 && io_pinned == io_threads && workers == 2 && workers_pinned == 1;
      },
      "every client I/O thread (the informer's, the test server's caller's) and one of the two scheduler "
      "workers pinned to the home CPU, the other worker not");
  informer->stop();
}
