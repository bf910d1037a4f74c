#include "actors/inference_client.hpp"

#include <functional>
#include <unordered_map>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/errors.hpp"
#include "actors/every_actor.hpp"
#include "actors/tsan.hpp"

namespace kinformer::actors {
namespace {

struct ClientState {
  InferenceActor server;
  std::string where;  // "host:port", for error messages
  uint64_t next_id = 1;
  std::unordered_map<uint64_t, std::function<void(const caf::error&)>>
      waiting;  // forwarded, not yet answered

  using Self = InferenceActor::stateful_pointer<ClientState>;

  // Forwards one request; its answer (or error) goes to a promise of the same type.
  template <class Reply, class... Ts>
  caf::typed_response_promise<Reply> forward(Self self, Ts&&... xs) {
    auto promise = self->template make_response_promise<Reply>();
    const uint64_t id = next_id++;
    waiting.emplace(id, [promise](const caf::error& e) mutable { promise.deliver(e); });
    detail::handing_over();
    self->request(server, caf::infinite, std::forward<Ts>(xs)...)
        .then(handed_off([=](Reply& reply) mutable {
                if (self->state.waiting.erase(id) == 0) return;
                detail::handing_over();
                promise.deliver(std::move(reply));
              }),
              handed_off([=](caf::error& err) mutable {
                if (self->state.waiting.erase(id) == 0) return;
                detail::handing_over();
                promise.deliver(err);
              }));
    return promise;
  }

  void server_down(Self self, const caf::down_msg& msg) {
    auto error = to_caf_error(
        Error{Errc::stopped, "inference server " + where + " is gone: " + self->system().render(msg.reason)});
    auto all = std::move(waiting);
    waiting.clear();
    for (auto& [id, fail] : all) {
      detail::handing_over();
      fail(error);
    }
    self->quit(msg.reason);
  }
};

InferenceActor::behavior_type client(InferenceActor::stateful_pointer<ClientState> self,
                                     InferenceActor server, std::string where) {
  self->state.server = server;
  self->state.where = std::move(where);
  self->monitor(server);
  self->set_down_handler(handed_off([=](caf::down_msg& msg) { self->state.server_down(self, msg); }));
  return {
      handed_off([=](forecast_atom, ForecastRequest& request) {
        return self->state.forward<ForecastReply>(self, forecast_atom::value, std::move(request));
      }),
      handed_off([=](metrics_atom) { return self->state.forward<InferenceMetrics>(self, metrics_atom::value); }),
  };
}

}  // namespace

Result<InferenceActor> connect_inference(caf::actor_system& system, const std::string& host, uint16_t port) {
  const std::string where = host + ":" + std::to_string(port);
  auto server = system.middleman().remote_actor<InferenceActor>(host, port);
  if (!server)
    return Error{Errc::connection_failed, "inference server " + where + ": " + system.render(server.error())};
  return InferenceActor{system.spawn(client, *server, where)};
}

}  // namespace kinformer::actors
