// Tests for runtime/metrics_server.hpp: a real scrape over loopback HTTP, read with
// Debian's python3 (urllib) and python3-prometheus-client's text parser.
#include "runtime/metrics_server.hpp"
#include "tests/support/text.hpp"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace kinformer {
namespace {

std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

// GETs each path on 127.0.0.1:port; prints "<status> <body>" per path (body's newlines as |).
std::string scrape(std::uint16_t port, const std::string& paths, int& status) {
  const std::string script =
      "import sys, urllib.request, urllib.error\n"
      "for p in sys.argv[2:]:\n"
      "  try:\n"
      "    r = urllib.request.urlopen(\"http://127.0.0.1:%s%s\" % (sys.argv[1], p), timeout=10)\n"
      "    code, body, ctype = r.status, r.read().decode(), r.headers.get(\"Content-Type\")\n"
      "  except urllib.error.HTTPError as e:\n"
      "    code, body, ctype = e.code, e.read().decode(), e.headers.get(\"Content-Type\")\n"
      "  print(p, code, ctype, body.replace(\"\\n\", \"|\"))\n";
  std::string out;
  FILE* pipe = popen((python() + " -c '" + script + "' " + std::to_string(port) + " " + paths).c_str(), "r");
  if (!pipe) return status = -1, out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  status = pclose(pipe);
  return out;
}

using kinformer::testing::contains;

TEST_CASE("the metrics endpoint serves metrics health and readiness over HTTP",
          "[metrics_server][item-2][integration]") {
  MetricsRegistry registry;
  registry.counter("kinformer_test_events_total", "Events.", {"type"}).with({"ADDED"}).inc(4);
  std::atomic<bool> ready{false};
  MetricsServer server({&registry, [&] { return ready.load(); }});
  auto port = server.start();
  REQUIRE(port);
  CHECK(*port != 0);

  int status = 0;
  auto out = scrape(*port, "/metrics /healthz /readyz /nope", status);
  INFO(out);
  REQUIRE(status == 0);
  CHECK(contains(out,
                 "/metrics 200 text/plain; version=0.0.4; charset=utf-8 # HELP kinformer_test_events_total "
                 "Events.|# TYPE kinformer_test_events_total counter|"
                 "kinformer_test_events_total{type=\"ADDED\"} 4|"));
  CHECK(contains(out, "/healthz 200 text/plain ok|"));
  CHECK(contains(out, "/readyz 503 text/plain not ready|"));
  CHECK(contains(out, "/nope 404"));

  ready = true;
  registry.counter("kinformer_test_events_total", "Events.", {"type"}).with({"ADDED"}).inc();
  out = scrape(*port, "/readyz /metrics", status);
  CHECK(contains(out, "/readyz 200 text/plain ok|"));
  CHECK(contains(out, "kinformer_test_events_total{type=\"ADDED\"} 5|"));
  server.stop();
  server.stop();  // idempotent
}

TEST_CASE("a scrape parses with the prometheus client after a known workload",
          "[metrics_server][item-2][integration]") {
  MetricsRegistry registry;
  auto& latency =
      registry.histogram("kinformer_test_seconds", "Work.", {"stage"}, {0.01, 0.1}).with({"apply"});
  for (int i = 0; i < 10; ++i) latency.observe(i < 7 ? 0.005 : 0.05);
  registry.gauge("kinformer_test_depth", "Depth.").get().set(3);
  MetricsServer server({&registry, {}});
  auto port = server.start();
  REQUIRE(port);
  const std::string script =
      "import sys, urllib.request\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "text = urllib.request.urlopen(\"http://127.0.0.1:%s/metrics\" % sys.argv[1], "
      "timeout=10).read().decode()\n"
      "for f in text_string_to_metric_families(text):\n"
      "  for s in f.samples:\n"
      "    print(s.name, s.labels.get(\"le\", \"-\"), s.value)\n";
  std::string out;
  FILE* pipe = popen((python() + " -c '" + script + "' " + std::to_string(*port)).c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  INFO(out);
  REQUIRE(pclose(pipe) == 0);
  CHECK(contains(out, "kinformer_test_seconds_bucket 0.01 7.0\n"));
  CHECK(contains(out, "kinformer_test_seconds_bucket 0.1 10.0\n"));
  CHECK(contains(out, "kinformer_test_seconds_bucket +Inf 10.0\n"));
  CHECK(contains(out, "kinformer_test_seconds_count - 10.0\n"));
  CHECK(contains(out, "kinformer_test_depth - 3.0\n"));
}

TEST_CASE("a second server on a taken port fails with the address in the error",
          "[metrics_server][item-2][unit]") {
  MetricsRegistry registry;
  MetricsServer first({&registry, {}});
  auto port = first.start();
  REQUIRE(port);
  MetricsServer second({&registry, {}, "127.0.0.1", *port});
  auto taken = second.start();
  REQUIRE_FALSE(taken);
  CHECK(taken.error().code == Errc::server_error);
  CHECK(contains(taken.error().message, "127.0.0.1:" + std::to_string(*port)));
}

TEST_CASE("readyz waits for every readiness check of the registry and names those that fail",
          "[metrics_server][item-2][integration]") {
  MetricsRegistry registry;
  std::atomic<bool> pods{false};
  std::atomic<bool> configmaps{false};
  auto pods_check = registry.add_readiness_check("informer pods (pods) has not synced", [&] { return pods.load(); });
  auto cm_check =
      registry.add_readiness_check("informer cm (configmaps) has not synced", [&] { return configmaps.load(); });
  MetricsServer server({&registry, {}});
  auto port = server.start();
  REQUIRE(port);
  int status = 0;
  auto out = scrape(*port, "/readyz", status);
  INFO(out);
  CHECK(contains(out,
                 "/readyz 503 text/plain not ready:|  informer pods (pods) has not synced|"
                 "  informer cm (configmaps) has not synced|"));
  pods = true;
  out = scrape(*port, "/readyz", status);
  CHECK(contains(out, "/readyz 503 text/plain not ready:|  informer cm (configmaps) has not synced|"));
  configmaps = true;
  out = scrape(*port, "/readyz /healthz", status);
  CHECK(contains(out, "/readyz 200 text/plain ok|"));
  CHECK(contains(out, "/healthz 200 text/plain ok|"));
}

}  // namespace
}  // namespace kinformer
