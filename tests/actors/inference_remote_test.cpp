// Integration tests of inference across processes: `kinformer serve-inference`
// (the server process) and connect_inference (actors/inference_client.hpp) here,
// on 127.0.0.1, with the trained ETTh1 model of models/weights/.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/errors.hpp"
#include "actors/inference.hpp"
#include "actors/inference_client.hpp"
#include "actors/scheduler.hpp"
#include "models/informer_config.hpp"
#include "tests/support/forecast_windows.hpp"

namespace actors = kinformer::actors;
namespace models = kinformer::models;
using kinformer::Errc;
using kinformer::testing::window;
using namespace std::chrono_literals;

namespace {

const std::string weights_dir = std::string(KINFORMER_SOURCE_DIR) + "/models/weights/";
const std::string model_config = weights_dir + "etth1_s_24.json";
const std::string model_weights = weights_dir + "etth1_s_24.safetensors";

// `kinformer serve-inference` as a child process; killed (SIGKILL) at the latest in the destructor.
class ServerProcess {
 public:
  explicit ServerProcess(const std::string& max_delay_ms) {
    int out[2];
    REQUIRE(pipe(out) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      const std::string model = "h24=" + model_config + "," + model_weights;
      execl(KINFORMER_TOOL, KINFORMER_TOOL, "serve-inference", "--port", "0", "--model", model.c_str(),
            "--backend", "onednn", "--max-delay-ms", max_delay_ms.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* lines = fdopen(out[0], "r");
    char line[256] = {0};
    // Blocks until the server printed its address (or exited: then fgets fails).
    if (std::fgets(line, sizeof line, lines)) {
      unsigned p = 0;
      if (std::sscanf(line, "serving inference on 127.0.0.1:%u", &p) == 1) port_ = static_cast<uint16_t>(p);
    }
    std::fclose(lines);
  }
  ~ServerProcess() { kill_now(); }

  uint16_t port() const { return port_; }

  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

struct RemoteFixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{prepare(cfg)};
  caf::scoped_actor self{sys};

  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    c.load<caf::io::middleman>();
    actors::configure_scheduler(c);
    actors::register_errors(c);
    actors::register_inference_types(c);
    return c;
  }

  // One forecast, waited for; the reply or the error.
  std::pair<std::optional<actors::ForecastReply>, std::optional<caf::error>> ask(
      const actors::InferenceActor& a, actors::ForecastRequest r, std::chrono::seconds timeout = 30s) {
    std::pair<std::optional<actors::ForecastReply>, std::optional<caf::error>> out;
    self->request(a, timeout, actors::forecast_atom::value, std::move(r))
        .receive([&](const actors::ForecastReply& reply) { out.first = reply; },
                 [&](const caf::error& e) { out.second = e; });
    return out;
  }
};

}  // namespace

TEST_CASE_METHOD(RemoteFixture, "a client in another process gets the same forecasts as a local requester",
                 "[inference][remote][integration]") {
  ServerProcess server("1");
  REQUIRE(server.port() != 0);
  auto remote = actors::connect_inference(sys, "127.0.0.1", server.port());
  REQUIRE(remote);
  actors::InferenceOptions o;
  o.models = {{"h24", model_config, model_weights}};
  o.backend = "onednn";
  o.batching.max_delay = 1ms;
  o.quiet = true;
  auto local = actors::spawn_inference(sys, o);
  REQUIRE(local);
  auto config = models::load_config(model_config);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    // One request at a time: both sides run it as a batch of one, so the answers are bit-identical.
    auto there = ask(*remote, window("h24", config, seed));
    auto here = ask(*local, window("h24", config, seed));
    REQUIRE(there.first.has_value());
    REQUIRE(here.first.has_value());
    CHECK(there.first->pred_len == 24);
    CHECK(there.first->values == here.first->values);
  }
  auto unknown = ask(*remote, window("nope", config, 9));
  REQUIRE(unknown.second.has_value());  // the server's error crosses the connection unchanged
  CHECK(actors::from_caf_error(*unknown.second).code == Errc::unknown_model);
  caf::anon_send_exit(*local, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(*remote, caf::exit_reason::user_shutdown);
}

TEST_CASE_METHOD(RemoteFixture,
                 "killing the server fails the waiting remote request with a clear error, not a hang",
                 "[inference][remote][integration]") {
  ServerProcess server("600000");  // requests wait for company for 10 minutes: one is surely pending
  REQUIRE(server.port() != 0);
  auto remote = actors::connect_inference(sys, "127.0.0.1", server.port());
  REQUIRE(remote);
  auto config = models::load_config(model_config);
  std::optional<caf::error> error;
  auto pending = self->request(*remote, 60s, actors::forecast_atom::value, window("h24", config, 1));
  // The request is queued on the server once its metrics say so.
  bool queued = false;
  for (int i = 0; i < 2000 && !queued; ++i) {
    self->request(*remote, 10s, actors::metrics_atom::value)
        .receive([&](const actors::InferenceMetrics& m) { queued = m.queued == 1; },
                 [&](const caf::error&) {});
    if (!queued) std::this_thread::sleep_for(5ms);
  }
  REQUIRE(queued);
  const auto killed_at = std::chrono::steady_clock::now();
  server.kill_now();
  pending.receive([&](const actors::ForecastReply&) { FAIL("a forecast from a killed server"); },
                  [&](const caf::error& e) { error = e; });
  const auto waited = std::chrono::steady_clock::now() - killed_at;
  REQUIRE(error.has_value());
  INFO(sys.render(*error));
  CHECK(actors::from_caf_error(*error).code == Errc::stopped);
  CHECK_THAT(sys.render(*error), Catch::Contains("is gone"));
  CHECK(waited < 10s);  // the connection loss, not the request's 60 s timeout, answered it
}

TEST_CASE_METHOD(RemoteFixture, "connecting to a port nobody serves fails with connection_failed",
                 "[inference][remote][integration]") {
  auto remote = actors::connect_inference(sys, "127.0.0.1", 1);
  REQUIRE_FALSE(remote);
  CHECK(remote.error().code == Errc::connection_failed);
  CHECK_THAT(remote.error().message, Catch::Contains("127.0.0.1:1"));
}
