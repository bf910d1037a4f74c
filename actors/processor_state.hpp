// actors/processor_state.hpp
//
// ProcessorState: the Processor actor's state (actors/processor.hpp holds the
// contract), one struct whose member functions live by mechanism, one .cpp each:
// flow control (processor_credit.cpp), routing and delivery (processor_routing.cpp),
// supervision (processor_supervision.cpp, on actors/handler_supervisor.hpp),
// registration (processor_registration.cpp), resync (processor_resync.cpp), and the
// behaviour with drain (processor.cpp). Internal to the Processor: nothing outside
// those files includes it.
// Threading: one owner, the Processor actor. Errors: none.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/coalescing_backlog.hpp"
#include "actors/handler_supervisor.hpp"
#include "actors/processor.hpp"

namespace kinformer::actors::detail {

using TimePoint = caf::actor_clock::time_point;

/// What the Processor sends itself: resync checks and ends of back-offs, each with a generation,
/// and lag checks of a group (by key).
using ProcessorImpl = ProcessorActor::extend<caf::reacts_to<check_atom, std::uint64_t>,
                                             caf::reacts_to<revive_atom, RegistrationId, std::uint64_t>,
                                             caf::reacts_to<lag_atom, std::string, std::uint64_t>>;

inline constexpr std::chrono::milliseconds min_resync_period{1000};  // client-go's minimumResyncPeriod
inline constexpr std::uint32_t no_hop = std::numeric_limits<std::uint32_t>::max();

/// Identifies one upstream batch while groups hold its credit; 0 = none (a replay, a backlog item).
using TicketId = std::uint64_t;

/// A group's chain when a notification entered it: registration ids in visiting order.
using Route = std::vector<RegistrationId>;
using RoutePtr = std::shared_ptr<const Route>;

/// One notification on its way through a group, or a replay for one handler.
struct Item {
  NotificationBatchPtr batch;  // the notification is batch->items[index]
  std::uint32_t index = 0;
  RoutePtr route;              // null: a replay, for its handler only
  std::uint32_t hop = 0;       // position in *route of the handler it waits for
  std::uint32_t attempts = 0;  // failed deliveries so far (retry policy)
  TicketId ticket = 0;         // the upstream batch whose credit it holds in its group

  const Notification& get() const { return batch->items[index]; }
  bool initial() const { return get().type == NotificationType::added && get().is_in_initial_list; }
};

/// The batch a handler is working on.
struct InFlight {
  std::uint64_t seq = 0;
  std::vector<Item> items;  // in queue order: those sent, and those passing by in between
  std::vector<bool> sent;   // per item: in the batch (else its predicate did not take it)
  HandlerActor actor;       // sent to (after a swap, the old actor)
  std::chrono::steady_clock::time_point sent_at;  // for the handler's batch latency
};

/// A member's lifecycle (kube-rs's watcher: the state is a type). Sending: batches go
/// out whenever it has an actor, a queue and nothing in flight.
struct Serving {};
/// After a failure: nothing is sent until the revive_atom with `generation` comes; then
/// a new actor is made first if `then_restart` (else what failed is sent again).
struct BackingOff {
  std::uint64_t generation = 0;
  bool then_restart = false;
};
/// Detached: out of the route; its in-flight batch is answered (its stops count), then it is erased.
struct Leaving {};
using Lifecycle = std::variant<Serving, BackingOff, Leaving>;

struct Member {
  RegistrationPtr registration;
  std::string group;        // key into ProcessorState::groups
  std::uint64_t order = 0;  // registration order, for ties in priority
  HandlerActor actor;       // the current actor; null while a restart is pending
  std::deque<Item> queue;   // waiting here, in order
  std::optional<InFlight> in_flight;
  Lifecycle lifecycle;
  HandlerSupervisor supervisor;  // back-off and restart intensity
  HandlerActor retiring;           // swapped-out actor finishing its batch
  bool retiring_owned = false;
  bool owned = false;                   // the current actor is ours to end
  std::chrono::milliseconds period{0};  // effective resync period; 0 = none
  TimePoint next_resync{};
  bool due = true;  // resync notifications go to it (client-go: true from registration)
  std::int64_t replay_pending = 0;
  HandlerMetrics metrics;  // null instruments without ProcessorOptions::metrics

  RegistrationId id() const { return registration->id; }
  const HandlerOptions& options() const { return registration->options; }
  const SupervisionOptions& supervision() const { return registration->options.supervision; }
  bool leaving() const { return std::holds_alternative<Leaving>(lifecycle); }
  bool backing_off() const { return std::holds_alternative<BackingOff>(lifecycle); }
};

struct Group {
  RoutePtr route = std::make_shared<Route>();  // current chain, removing members excluded
  std::size_t interior = 0;                    // items queued at a hop or in flight
  CoalescingBacklog backlog;
  std::int64_t initial_pending = 0;  // initial-list adds in the backlog or the interior
  GroupMetrics metrics;              // null instruments without ProcessorOptions::metrics
  // Flow control (see the header, "Credit"): ticket → its items still in the interior.
  std::map<TicketId, std::size_t> held;
  bool loose = false;                     // cut loose: takes in nothing until its backlog is empty
  std::uint64_t lag_gen = 0;              // the armed lag check's generation
  std::optional<TimePoint> lag_deadline;  // when the armed lag check fires; none = none armed
};

/// One upstream batch's credit, given back once no group holds it.
struct Ticket {
  std::size_t credit = 0;
  std::size_t holders = 0;  // groups holding it, plus one while it is being distributed
  TimePoint entered;
  std::optional<TimePoint> waited_since;  // when a group finished it while others still held it
};

struct ProcessorState {
  using Self = ProcessorImpl::stateful_pointer<ProcessorState>;

  Self self = nullptr;
  ProcessorOptions options;
  ProcessorUpstream upstream;
  std::map<RegistrationId, Member> members;
  std::map<std::string, Group> groups;
  std::uint64_t next_order = 0;
  std::uint64_t next_seq = 0;
  std::map<TicketId, Ticket> tickets;
  TicketId next_ticket = 0;
  std::uint64_t check_gen = 0;
  std::uint64_t last_backoff = 0;  // generations of back-offs: a revive of an older one is stale
  std::chrono::milliseconds check_period{0};  // armed resync check; 0 = none
  bool draining = false;
  // Owned handler actors alive, ended when the Processor ends (whatever the reason).
  std::shared_ptr<std::map<RegistrationId, caf::actor>> owned =
      std::make_shared<std::map<RegistrationId, caf::actor>>();

  // -- flow control: credit, lagging groups (actors/processor_credit.cpp) --

  void set_upstream(ProcessorUpstream sink);
  /// Every group takes the batch in, then sends; its credit comes back once no group holds it.
  void distribute(const NotificationBatchPtr& batch, std::size_t credit);
  void enter(Group& group, const std::string& key, const NotificationBatchPtr& batch, std::uint32_t index,
             TicketId ticket);
  /// The group holds one more item of `id`'s batch; the first one makes it a holder.
  void hold(Group& group, const std::string& key, TicketId id);
  /// One of `item`'s batch left the group; the last one ends its hold.
  void release(Group& group, const Item& item);
  /// A holder let go of ticket `id`: its credit goes back once none is left. When a
  /// group finished it (`finished`) and others still hold it, they are being waited for.
  void drop_holder(TicketId id, bool finished);
  /// The group lets go of every ticket it holds: what arrives goes to its backlog
  /// until that is empty, so it holds back neither the Controller nor other groups.
  void cut_loose(Group& group, const std::string& key, const std::string& why);
  /// Makes sure a lag check of the group fires by `deadline`.
  void arm_lag(Group& group, const std::string& key, TimePoint deadline);
  /// A lag check: the group is cut loose if it held a batch lag_timeout after another
  /// group finished it, or stall_timeout after it came; else the next check is armed.
  void on_lag(const std::string& key, std::uint64_t gen);
  void note_backlog(const Group& group);

  // -- routing and delivery (actors/processor_routing.cpp) --

  /// Takes backlog notifications into the group while its window has room, then sends.
  void pump_group(Group& group);
  /// Where a notification enters the group: its first live hop. Every hop sees the
  /// notifications in order and lets those its predicate does not take pass by, so
  /// none overtakes another; a group of one drops what its handler does not take.
  std::uint32_t entry_hop(const Route& route, const Notification& n);
  /// The first position at or after `from` with a live member, or no_hop.
  std::uint32_t next_hop(const Route& route, std::uint32_t from);
  bool takes(Member& member, const Notification& n);
  /// After a hop answered `next`: on to the next taker in the item's route, or out of the group.
  void forward(Member& from, Item item);
  void finish(Member& member, const Item& item);
  void leave(Group& group, const Item& item);
  void publish_initial(Group& group);
  /// Sends the member its next batch; true if anything left its queue.
  bool pump(Member& member);
  void send(Member& member, InFlight flight);
  /// The upstream batch itself when the items sent are all of it, in order (no copy); else a new batch.
  static NotificationBatchPtr batch_of(const InFlight& flight);
  void answered(RegistrationId id, std::uint64_t seq, const HopReport& report);

  // -- supervision: failures, back-off, restarts (actors/processor_supervision.cpp) --

  void request_failed(RegistrationId id, std::uint64_t seq, const caf::error& err);
  void handler_down(const caf::down_msg& msg);
  /// Applies the registration's policy: `items` were not handled (in queue order),
  /// `failed` marks those that failed; the others go back first in line unchanged.
  void on_failure(Member& member, std::vector<Item> items, std::vector<bool> failed, const std::string& why,
                  bool actor_dead);
  void dead_letter(Member& member, const Item& item, const std::string& why);
  void restart(Member& member, const std::string& why);
  /// Nothing is sent to the member for `delay`; a back-off already running and
  /// ending in a restart still does.
  void back_off(Member& member, bool then_restart, std::chrono::milliseconds delay);
  void revive(RegistrationId id, std::uint64_t gen);
  /// Marks the registration failed and removes it (supervision gave up).
  void fail(Member& member, const std::string& why);

  // -- registration: attach, detach, swap (actors/processor_registration.cpp) --

  void attach(const RegistrationPtr& registration, const NotificationBatchPtr& replay);
  void detach(RegistrationId id);
  /// Takes the registration out of its group now; it goes once its in-flight batch is answered.
  void remove(RegistrationId id);
  void erase(RegistrationId id);
  void swap(const RegistrationPtr& registration);
  void rebuild_route(Group& group, const std::string& key);
  static std::string group_key(const Registration& registration);
  void after_change(RegistrationId id);
  void end_actor(Member& member);
  void end_retiring(Member& member);

  // -- resync (actors/processor_resync.cpp) --

  /// Whether sync notifications go to the member: client-go's syncing flag, which
  /// stays true for every handler of an informer that never resyncs.
  bool syncing(const Member& member) const;
  void set_period(Member& member);
  /// (Re)arms the check at min(resync_period, every period) if that changed.
  void arm_check();
  void on_check(std::uint64_t gen);

  // -- drain and log lines (actors/processor.cpp) --

  void drain();
  void finish_drain();
  void log(const Member& member, const std::string& line, std::string_view key = {}) const;
  static std::string describe(const Notification& n);
};

}  // namespace kinformer::actors::detail
