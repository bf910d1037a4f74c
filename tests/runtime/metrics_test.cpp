// Tests for runtime/metrics.hpp: the registry and the text exposition format 0.0.4
// (names, label escaping, HELP/TYPE lines, histogram _bucket/_sum/_count with
// le="+Inf"), and the rendered text read back by Debian's python3-prometheus-client.
#include "runtime/metrics.hpp"
#include "tests/support/text.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kinformer {
namespace {

using kinformer::testing::contains;

// Runs `command`, returns its stdout and sets `status` to its exit status.
std::string run(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return status = -1, out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  status = pclose(pipe);
  return out;
}

TEST_CASE("metric and label names follow the format's character rules", "[metrics][item-2][unit]") {
  CHECK(valid_metric_name("kinformer_reflector_lists_total"));
  CHECK(valid_metric_name("ns:sub_system:rate5m"));
  CHECK(valid_metric_name("_leading_underscore"));
  CHECK_FALSE(valid_metric_name(""));
  CHECK_FALSE(valid_metric_name("9starts_with_digit"));
  CHECK_FALSE(valid_metric_name("has-dash"));
  CHECK_FALSE(valid_metric_name("has space"));
  CHECK(valid_label_name("resource"));
  CHECK(valid_label_name("code2"));
  CHECK_FALSE(valid_label_name("__reserved"));
  CHECK_FALSE(valid_label_name("with:colon"));
  CHECK_FALSE(valid_label_name("1st"));
  CHECK_FALSE(valid_label_name(""));
}

TEST_CASE("registering an invalid name or a clashing family throws at registration",
          "[metrics][item-2][unit]") {
  MetricsRegistry r;
  CHECK_THROWS_AS(r.counter("bad-name", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.gauge("ok_name", "x", {"bad label"}), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("dup_labels_total", "x", {"a", "a"}), std::invalid_argument);
  CHECK_THROWS_AS(r.histogram("h_seconds", "x", {"le"}), std::invalid_argument);
  CHECK_THROWS_AS(r.histogram("h2_seconds", "x", {}, std::vector<double>{1, 1}), std::invalid_argument);
  auto& a = r.counter("shared_total", "Shared.", {"kind"});
  CHECK(&r.counter("shared_total", "Shared.", {"kind"}) == &a);  // same family, reused
  CHECK_THROWS_AS(r.gauge("shared_total", "Shared.", {"kind"}), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("shared_total", "Shared.", {"other"}), std::invalid_argument);
  CHECK_THROWS_AS(a.with({"x", "y"}), std::invalid_argument);  // wrong label count
}

TEST_CASE("counters and gauges render with HELP and TYPE lines and label sets", "[metrics][item-2][unit]") {
  MetricsRegistry r;
  auto& requests = r.counter("http_requests_total", "Requests served.", {"verb", "code"});
  requests.with({"get", "200"}).inc();
  requests.with({"get", "200"}).inc(2);
  requests.with({"list", "404"}).inc();
  requests.with({"list", "404"}).inc(-5);  // a counter never goes down
  auto& depth = r.gauge("queue_depth", "Items queued.");
  depth.get().set(7);
  depth.get().dec(2);
  CHECK(r.render() ==
        "# HELP http_requests_total Requests served.\n"
        "# TYPE http_requests_total counter\n"
        "http_requests_total{verb=\"get\",code=\"200\"} 3\n"
        "http_requests_total{verb=\"list\",code=\"404\"} 1\n"
        "# HELP queue_depth Items queued.\n"
        "# TYPE queue_depth gauge\n"
        "queue_depth 5\n");
}

TEST_CASE("label values escape backslash quote and newline and HELP escapes backslash and newline",
          "[metrics][item-2][unit]") {
  CHECK(escape_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
  MetricsRegistry r;
  r.gauge("g", "line one\nback\\slash \"quoted\"", {"path"}).with({"C:\\dir\n\"x\""}).set(1);
  auto text = r.render();
  CHECK(contains(text, "# HELP g line one\\nback\\\\slash \"quoted\"\n"));
  CHECK(contains(text, "g{path=\"C:\\\\dir\\n\\\"x\\\"\"} 1\n"));
}

TEST_CASE("a histogram renders cumulative buckets ending in +Inf then sum and count",
          "[metrics][item-2][unit]") {
  MetricsRegistry r;
  auto& h = r.histogram("latency_seconds", "Latency.", {"verb"}, {0.1, 0.5, 1}).with({"get"});
  for (double v : {0.05, 0.1, 0.3, 0.7, 2.0}) h.observe(v);
  CHECK(r.render() ==
        "# HELP latency_seconds Latency.\n"
        "# TYPE latency_seconds histogram\n"
        "latency_seconds_bucket{verb=\"get\",le=\"0.1\"} 2\n"
        "latency_seconds_bucket{verb=\"get\",le=\"0.5\"} 3\n"
        "latency_seconds_bucket{verb=\"get\",le=\"1\"} 4\n"
        "latency_seconds_bucket{verb=\"get\",le=\"+Inf\"} 5\n"
        "latency_seconds_sum{verb=\"get\"} 3.15\n"
        "latency_seconds_count{verb=\"get\"} 5\n");
}

TEST_CASE("special values print as the format spells them", "[metrics][item-2][unit]") {
  CHECK(format_value(42) == "42");
  CHECK(format_value(-3) == "-3");
  CHECK(format_value(0.25) == "0.25");
  CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(format_value(std::nan("")) == "NaN");
}

TEST_CASE("a family keeps at most max_children label sets and folds the rest into _overflow",
          "[metrics][item-2][unit]") {
  MetricsRegistry r;
  auto& family = r.counter("by_resource_total", "x", {"resource"}, 2);
  for (int i = 0; i < 100; ++i) family.with({"r" + std::to_string(i)}).inc();
  auto text = r.render();
  CHECK(contains(text, "by_resource_total{resource=\"r0\"} 1\n"));
  CHECK(contains(text, "by_resource_total{resource=\"r1\"} 1\n"));
  CHECK(contains(text, "by_resource_total{resource=\"_overflow\"} 98\n"));
  CHECK_FALSE(contains(text, "r2"));
}

TEST_CASE("concurrent increments from many threads lose no update", "[metrics][item-2][unit]") {
  MetricsRegistry r;
  auto& counter = r.counter("events_total", "x").get();
  auto& hist = r.histogram("sizes", "x", {}, std::vector<double>{1, 10}).get();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        counter.inc();
        hist.observe(5);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(counter.value() == 80000);
  CHECK(hist.count() == 80000);
  CHECK(hist.sum() == 400000);
  CHECK(hist.cumulative_count(0) == 0);
  CHECK(hist.cumulative_count(1) == 80000);
}

// The text read by the reference parser: every family, type, label and value survives.
TEST_CASE("python3-prometheus-client parses the rendered text back to the same samples",
          "[metrics][item-2][integration]") {
  MetricsRegistry r;
  r.counter("kinformer_test_requests_total", "Requests \\ with \"odd\"\nhelp.", {"verb", "path"})
      .with({"get", "a\"b\\c\nd"})
      .inc(3);
  r.gauge("kinformer_test_watchers", "Open watches.").get().set(2);
  auto& h = r.histogram("kinformer_test_latency_seconds", "Latency.", {"verb"}, {0.1, 1}).with({"list"});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(5);
  std::string path = "/tmp/kinformer_metrics_test_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << r.render();
  const std::string script =
      "import sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "for f in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
      "  for s in f.samples:\n"
      "    print(f.name, f.type, s.name, sorted(s.labels.items()), s.value)\n";
  int status = 0;
  // Debian's interpreter, where python3-prometheus-client is installed (PATH may name another).
  const std::string python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  auto out = run(python + " -c '" + script + "' " + path, status);
  std::remove(path.c_str());
  INFO(out);
  REQUIRE(status == 0);
  CHECK(contains(out,
                 "kinformer_test_requests counter kinformer_test_requests_total [('path', 'a\"b\\\\c\\nd'), "
                 "('verb', 'get')] 3.0\n"));
  CHECK(contains(out, "kinformer_test_watchers gauge kinformer_test_watchers [] 2.0\n"));
  CHECK(contains(
      out,
      "kinformer_test_latency_seconds histogram kinformer_test_latency_seconds_bucket [('le', '0.1'), "
      "('verb', 'list')] 1.0\n"));
  CHECK(contains(
      out,
      "kinformer_test_latency_seconds histogram kinformer_test_latency_seconds_bucket [('le', '+Inf'), "
      "('verb', 'list')] 3.0\n"));
  CHECK(contains(out, "kinformer_test_latency_seconds_sum [('verb', 'list')] 5.55\n"));
  CHECK(contains(out, "kinformer_test_latency_seconds_count [('verb', 'list')] 3.0\n"));
}

TEST_CASE("collectors set their values at every render and stop once their hook is gone",
          "[metrics][item-2][unit]") {
  MetricsRegistry registry;
  auto& size = registry.gauge("kinformer_test_cache_objects", "Objects.").get();
  int calls = 0;
  auto hook = registry.add_collector([&] { size.set(++calls * 10); });
  CHECK(contains(registry.render(), "kinformer_test_cache_objects 10\n"));
  CHECK(contains(registry.render(), "kinformer_test_cache_objects 20\n"));
  auto moved = std::move(hook);  // the registration moves with the hook
  CHECK(contains(registry.render(), "kinformer_test_cache_objects 30\n"));
  moved.reset();
  CHECK(contains(registry.render(), "kinformer_test_cache_objects 30\n"));
  CHECK(calls == 3);
  auto throwing = registry.add_collector([] { throw std::runtime_error("cache gone"); });
  CHECK(contains(registry.render(), "kinformer_test_cache_objects 30\n"));  // the render goes on
}

TEST_CASE("readiness checks name what is not ready until it is and end with their hook",
          "[metrics][item-2][unit]") {
  MetricsRegistry registry;
  CHECK(registry.not_ready().empty());
  bool synced = false;
  auto pods = registry.add_readiness_check("informer pods (pods) has not synced", [&] { return synced; });
  {
    auto broken = registry.add_readiness_check("broken check", []() -> bool { throw std::runtime_error("x"); });
    CHECK(registry.not_ready() == std::vector<std::string>{"informer pods (pods) has not synced", "broken check"});
  }
  CHECK(registry.not_ready() == std::vector<std::string>{"informer pods (pods) has not synced"});
  synced = true;
  CHECK(registry.not_ready().empty());
  synced = false;
  pods.reset();
  CHECK(registry.not_ready().empty());
}

}  // namespace
}  // namespace kinformer
