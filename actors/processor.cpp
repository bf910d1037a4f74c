#include "actors/processor.hpp"

#include <algorithm>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/duration.hpp>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/coalescing_backlog.hpp"
#include "actors/every_actor.hpp"
#include "actors/handler_supervisor.hpp"
#include "actors/tsan.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors {
namespace {

using namespace std::chrono_literals;
using TimePoint = caf::actor_clock::time_point;

/// What the Processor sends itself: resync checks and ends of back-offs, each with a generation,
/// and lag checks of a group (by key).
using ProcessorImpl = ProcessorActor::extend<caf::reacts_to<check_atom, std::uint64_t>,
                                             caf::reacts_to<revive_atom, RegistrationId, std::uint64_t>,
                                             caf::reacts_to<lag_atom, std::string, std::uint64_t>>;

constexpr std::chrono::milliseconds min_resync_period = 1s;  // client-go's minimumResyncPeriod
constexpr std::uint32_t no_hop = std::numeric_limits<std::uint32_t>::max();

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

  // -- upstream --

  void set_upstream(ProcessorUpstream sink) {
    upstream = std::move(sink);
    send_over(self, upstream, credit_atom::value, options.max_buffered_keys);
  }

  /// Every group takes the batch in, then sends; its credit comes back once no group holds it.
  void distribute(const NotificationBatchPtr& batch, std::size_t credit) {
    const auto id = ++next_ticket;
    tickets[id] = Ticket{credit, 1, self->clock().now(), std::nullopt};  // held while distributed
    for (auto& [key, group] : groups)
      for (std::uint32_t i = 0; i < batch->items.size(); ++i) enter(group, key, batch, i, id);
    for (auto& [key, group] : groups) pump_group(group);
    drop_holder(id, false);
  }

  void enter(Group& group, const std::string& key, const NotificationBatchPtr& batch, std::uint32_t index,
             TicketId ticket) {
    const auto& n = batch->items[index];
    if (!group.loose && group.interior >= options.group_window) cut_loose(group, key, "its window is full");
    if (group.loose) {
      const auto before = group.backlog.size();
      group.initial_pending += group.backlog.push(n);
      if (group.metrics.coalesced && group.backlog.size() <= before)
        group.metrics.coalesced->inc(static_cast<double>(before + 1 - group.backlog.size()));
      note_backlog(group);
      publish_initial(group);
      return;
    }
    auto hop = entry_hop(*group.route, n);
    if (hop == no_hop) return;
    Item item{batch, index, group.route, hop, 0, ticket};
    ++group.interior;
    hold(group, key, ticket);
    if (item.initial()) {
      ++group.initial_pending;
      publish_initial(group);
    }
    members.at((*group.route)[hop]).queue.push_back(std::move(item));
  }

  // -- flow control --

  /// The group holds one more item of `id`'s batch; the first one makes it a holder.
  void hold(Group& group, const std::string& key, TicketId id) {
    if (group.held[id]++ > 0) return;
    auto& ticket = tickets.at(id);
    ++ticket.holders;
    arm_lag(group, key, ticket.entered + options.stall_timeout);
  }

  /// One of `item`'s batch left the group; the last one ends its hold.
  void release(Group& group, const Item& item) {
    auto found = group.held.find(item.ticket);
    if (found == group.held.end() || --found->second > 0) return;  // none held: cut loose since
    group.held.erase(found);
    drop_holder(item.ticket, true);
  }

  /// A holder let go of ticket `id`: its credit goes back once none is left. When a
  /// group finished it (`finished`) and others still hold it, they are being waited for.
  void drop_holder(TicketId id, bool finished) {
    auto found = tickets.find(id);
    auto& ticket = found->second;
    if (--ticket.holders == 0) {
      if (upstream && ticket.credit > 0) send_over(self, upstream, credit_atom::value, ticket.credit);
      tickets.erase(found);
      return;
    }
    if (!finished || ticket.waited_since) return;
    ticket.waited_since = self->clock().now();
    for (auto& [key, group] : groups)
      if (group.held.count(id) > 0) arm_lag(group, key, *ticket.waited_since + options.lag_timeout);
  }

  /// The group lets go of every ticket it holds: what arrives goes to its backlog
  /// until that is empty, so it holds back neither the Controller nor other groups.
  void cut_loose(Group& group, const std::string& key, const std::string& why) {
    group.loose = true;
    ++options.status->groups_cut_loose;
    auto held = std::move(group.held);
    group.held.clear();
    for (const auto& [id, count] : held) drop_holder(id, false);
    log::debug("processor", "group cut loose: " + why,
               {{"informer", options.metrics ? options.metrics->informer() : std::string()},
                {"resource", options.metrics ? options.metrics->resource() : std::string()},
                {"group", key}});
  }

  /// Makes sure a lag check of the group fires by `deadline`.
  void arm_lag(Group& group, const std::string& key, TimePoint deadline) {
    if (group.lag_deadline && *group.lag_deadline <= deadline) return;
    group.lag_deadline = deadline;
    auto delay = std::max(deadline - self->clock().now(), TimePoint::duration::zero());
    self->delayed_send(self, delay, lag_atom::value, key, ++group.lag_gen);
  }

  /// A lag check: the group is cut loose if it held a batch lag_timeout after another
  /// group finished it, or stall_timeout after it came; else the next check is armed.
  void on_lag(const std::string& key, std::uint64_t gen) {
    auto found = groups.find(key);
    if (found == groups.end() || found->second.lag_gen != gen) return;
    auto& group = found->second;
    group.lag_deadline.reset();
    if (group.held.empty()) return;
    const auto now = self->clock().now();
    std::optional<TimePoint> next;
    for (const auto& [id, count] : group.held) {
      const auto& ticket = tickets.at(id);
      auto deadline = ticket.entered + options.stall_timeout;
      if (ticket.waited_since) deadline = std::min(deadline, *ticket.waited_since + options.lag_timeout);
      if (deadline <= now) {
        cut_loose(group, key, deadline == ticket.entered + options.stall_timeout ? "stalled" : "others wait for it");
        return;
      }
      next = next ? std::min(*next, deadline) : deadline;
    }
    arm_lag(group, key, *next);
  }

  /// Takes backlog notifications into the group while its window has room, then sends.
  void pump_group(Group& group) {
    if (!group.backlog.empty() && group.interior < options.group_window) {
      auto taken = std::make_shared<NotificationBatch>();  // one batch: a handler takes it whole
      while (!group.backlog.empty() && group.interior + taken->items.size() < options.group_window)
        taken->items.push_back(*group.backlog.pop());
      NotificationBatchPtr batch = std::move(taken);
      for (std::uint32_t i = 0; i < batch->items.size(); ++i) {
        Item item{batch, i, group.route, 0, 0, 0};
        item.hop = entry_hop(*group.route, item.get());
        if (item.hop == no_hop) {
          if (item.initial()) --group.initial_pending;
          continue;
        }
        ++group.interior;
        members.at((*group.route)[item.hop]).queue.push_back(std::move(item));
      }
    }
    // Caught up: it holds credit again (earlier, a stuck group would hold back each batch in turn).
    if (group.loose && group.backlog.empty() && group.interior == 0) group.loose = false;
    publish_initial(group);
    if (group.metrics.backlog) group.metrics.backlog->set(static_cast<double>(group.backlog.size()));
    // A forward may reach a hop pumped earlier in this round (an older route's order).
    for (bool progress = true; progress;) {
      progress = false;
      for (auto id : *group.route) progress = pump(members.at(id)) || progress;
    }
  }

  void note_backlog(const Group& group) {
    auto size = static_cast<std::uint64_t>(group.backlog.size());
    if (size > options.status->backlog_max) options.status->backlog_max = size;
    if (group.metrics.backlog) group.metrics.backlog->set(static_cast<double>(size));
  }

  // -- routing --

  /// Where a notification enters the group: its first live hop. Every hop sees the
  /// notifications in order and lets those its predicate does not take pass by, so
  /// none overtakes another; a group of one drops what its handler does not take.
  std::uint32_t entry_hop(const Route& route, const Notification& n) {
    auto hop = next_hop(route, 0);
    if (hop != no_hop && route.size() == 1 && !takes(members.at(route[hop]), n)) return no_hop;
    return hop;
  }

  /// The first position at or after `from` with a live member, or no_hop.
  std::uint32_t next_hop(const Route& route, std::uint32_t from) {
    for (auto p = from; p < route.size(); ++p) {
      auto found = members.find(route[p]);
      if (found != members.end() && !found->second.leaving()) return p;
    }
    return no_hop;
  }

  /// Whether sync notifications go to the member: client-go's syncing flag, which
  /// stays true for every handler of an informer that never resyncs.
  bool syncing(const Member& member) const {
    return options.resync_period.count() == 0 || (member.period.count() > 0 && member.due);
  }

  bool takes(Member& member, const Notification& n) {
    if (n.is_sync() && !syncing(member)) return false;
    try {
      return member.options().predicate(n);
    } catch (const std::exception& e) {
      log(member, "predicate threw on " + std::string(n.key()) + ": " + e.what() + " (not matched)", n.key());
    } catch (...) {
      log(member, "predicate threw on " + std::string(n.key()) + " (not matched)", n.key());
    }
    return false;
  }

  /// After a hop answered `next`: on to the next taker in the item's route, or out of the group.
  void forward(Member& from, Item item) {
    if (!item.route) {  // a replay: for this handler only
      --from.replay_pending;
      publish_initial(groups.at(from.group));
      return;
    }
    auto hop = next_hop(*item.route, item.hop + 1);
    if (hop == no_hop) {
      leave(groups.at(from.group), item);
      return;
    }
    item.hop = hop;
    item.attempts = 0;
    members.at((*item.route)[hop]).queue.push_back(std::move(item));
  }

  void finish(Member& member, const Item& item) {
    if (!item.route) {
      --member.replay_pending;
      publish_initial(groups.at(member.group));
      return;
    }
    leave(groups.at(member.group), item);
  }

  void leave(Group& group, const Item& item) {
    --group.interior;
    if (item.ticket != 0) release(group, item);
    if (item.initial()) {
      --group.initial_pending;
      publish_initial(group);
    }
  }

  void publish_initial(Group& group) {
    for (auto id : *group.route) {
      auto& member = members.at(id);
      member.registration->status->pending_initial = group.initial_pending + member.replay_pending;
    }
  }

  // -- delivery --

  /// Sends the member its next batch; true if anything left its queue.
  bool pump(Member& member) {
    bool progress = false;
    while (!member.in_flight && !member.backing_off() && !member.queue.empty() && member.actor) {
      progress = true;
      InFlight flight;
      std::size_t taken = 0;
      while (!member.queue.empty() && taken < options.max_batch) {
        bool take = !member.queue.front().route || takes(member, member.queue.front().get());
        flight.items.push_back(std::move(member.queue.front()));
        flight.sent.push_back(take);
        member.queue.pop_front();
        if (take) ++taken;
      }
      if (taken == 0) {  // all pass by: on to the next hop, in order
        for (auto& item : flight.items) forward(member, std::move(item));
        continue;
      }
      send(member, std::move(flight));
    }
    return progress;
  }

  void send(Member& member, InFlight flight) {
    flight.seq = ++next_seq;
    flight.actor = member.actor;
    auto batch = batch_of(flight);
    flight.sent_at = std::chrono::steady_clock::now();
    if (member.metrics.deliveries) member.metrics.deliveries->inc(static_cast<double>(batch->items.size()));
    auto id = member.id();
    auto seq = flight.seq;
    auto timeout = member.supervision().hop_timeout;
    member.in_flight = std::move(flight);
    detail::handing_over();
    self->request(member.actor, timeout.count() > 0 ? caf::duration{timeout} : caf::duration{caf::infinite},
                  notify_atom::value, id, std::move(batch))
        .then(handed_off(
                  [=](handled_atom, RegistrationId, const HopReport& report) { answered(id, seq, report); }),
              handed_off([=](caf::error& err) { request_failed(id, seq, err); }));
  }

  /// The upstream batch itself when the items sent are all of it, in order (no copy); else a new batch.
  static NotificationBatchPtr batch_of(const InFlight& flight) {
    const auto& items = flight.items;
    const auto& first = items.front().batch;
    bool whole = first->items.size() == items.size();
    for (std::size_t i = 0; whole && i < items.size(); ++i)
      whole = flight.sent[i] && items[i].batch == first && items[i].index == i;
    if (whole) return first;
    auto batch = std::make_shared<NotificationBatch>();
    for (std::size_t i = 0; i < items.size(); ++i)
      if (flight.sent[i]) batch->items.push_back(items[i].get());
    return batch;
  }

  void answered(RegistrationId id, std::uint64_t seq, const HopReport& report) {
    detail::taking_over(report.failure.data());  // the handler's handing_over(): handler.cpp
    detail::taking_over(report.stopped.data());
    auto found = members.find(id);
    if (found == members.end() || !found->second.in_flight || found->second.in_flight->seq != seq) return;
    auto& member = found->second;
    auto flight = std::move(*member.in_flight);
    member.in_flight.reset();
    ++member.registration->status->handled_batches;
    if (member.metrics.batch_seconds)
      member.metrics.batch_seconds->observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - flight.sent_at).count());
    end_retiring(member);
    // Items before the failed position are done; from it on they go to on_failure.
    std::size_t first_unhandled = flight.items.size();
    std::uint32_t position = 0;  // in the batch sent
    auto stopped = report.stopped.begin();
    for (std::size_t i = 0; i < flight.items.size(); ++i) {
      if (!flight.sent[i]) {
        forward(member, std::move(flight.items[i]));
        continue;
      }
      if (position == report.failed_at) {
        first_unhandled = i;
        break;
      }
      while (stopped != report.stopped.end() && *stopped < position) ++stopped;
      if (stopped != report.stopped.end() && *stopped == position)
        finish(member, flight.items[i]);
      else
        forward(member, std::move(flight.items[i]));
      ++position;
    }
    if (first_unhandled < flight.items.size()) {
      std::vector<Item> items(
          std::make_move_iterator(flight.items.begin() + static_cast<std::ptrdiff_t>(first_unhandled)),
          std::make_move_iterator(flight.items.end()));
      std::vector<bool> failed(items.size(), false);
      failed.front() = true;
      on_failure(member, std::move(items), std::move(failed), report.failure, false);
    } else {
      member.supervisor.handled();
    }
    after_change(id);
  }

  void request_failed(RegistrationId id, std::uint64_t seq, const caf::error& err) {
    auto found = members.find(id);
    if (found == members.end() || !found->second.in_flight || found->second.in_flight->seq != seq) return;
    auto& member = found->second;
    auto flight = std::move(*member.in_flight);
    member.in_flight.reset();
    bool timed_out = err == caf::sec::request_timeout;
    bool current = flight.actor == member.actor;
    end_retiring(member);
    if (!current) {
      // A swapped-out actor failed its last batch: the new actor gets it.
      for (auto it = flight.items.rbegin(); it != flight.items.rend(); ++it)
        member.queue.push_front(std::move(*it));
      after_change(id);
      return;
    }
    auto why = timed_out ? std::string("no answer within the hop timeout") : self->system().render(err);
    // Anything but a timeout means the actor died (an exception, a kill): restart it.
    on_failure(member, std::move(flight.items), std::move(flight.sent), why, !timed_out);
    after_change(id);
  }

  void handler_down(const caf::down_msg& msg) {
    std::vector<RegistrationId> hit;
    for (auto& [id, member] : members)
      if (member.actor && member.actor.address() == msg.source) hit.push_back(id);
    for (auto id : hit) {
      auto& member = members.at(id);
      std::vector<Item> items;
      std::vector<bool> failed;
      if (member.in_flight) {
        items = std::move(member.in_flight->items);
        failed = std::move(member.in_flight->sent);
        member.in_flight.reset();
      }
      on_failure(member, std::move(items), std::move(failed),
                 "handler actor went down: " + self->system().render(msg.reason), true);
      after_change(id);
    }
  }

  /// Applies the registration's policy: `items` were not handled (in queue order),
  /// `failed` marks those that failed; the others go back first in line unchanged.
  void on_failure(Member& member, std::vector<Item> items, std::vector<bool> failed, const std::string& why,
                  bool actor_dead) {
    ++options.status->handler_failures;
    if (member.metrics.failures) member.metrics.failures->inc();
    if (member.leaving()) {  // going anyway: what failed is dropped, as buffered notifications are
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (failed[i])
          finish(member, items[i]);
        else
          forward(member, std::move(items[i]));
      }
      return;
    }
    const auto& policy = member.supervision();
    std::vector<Item> again;
    bool retrying = false;
    bool any_failed = false;
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto& item = items[i];
      if (!failed[i]) {
        again.push_back(std::move(item));
        continue;
      }
      any_failed = true;
      if (policy.policy == FailurePolicy::retry && item.attempts < policy.retries) {
        ++item.attempts;
        again.push_back(std::move(item));
        retrying = true;
      } else {
        dead_letter(member, item, why);
      }
    }
    for (auto it = again.rbegin(); it != again.rend(); ++it) member.queue.push_front(std::move(*it));
    if (actor_dead || (policy.policy == FailurePolicy::restart && any_failed)) {
      restart(member, why);
    } else if (retrying) {
      log(member, why + "; retrying");
      back_off(member, false, member.supervisor.next_backoff(self->clock().now()));
    }
  }

  void dead_letter(Member& member, const Item& item, const std::string& why) {
    ++member.registration->status->dead_letters;
    ++options.status->dead_letters;
    if (member.metrics.dead_letters) member.metrics.dead_letters->inc();
    log(member, "dead letter: " + describe(item.get()) + " (" + why + ")", item.get().key());
    finish(member, item);
  }

  void restart(Member& member, const std::string& why) {
    if (!member.registration->factory) {
      fail(member, "handler failed (" + why + ") and the registration has no factory to restart it");
      return;
    }
    auto now = self->clock().now();
    if (auto refused = member.supervisor.refuse_restart(now)) {
      fail(member, *refused + " (last: " + why + ")");
      return;
    }
    end_actor(member);
    auto delay = member.supervisor.next_backoff(now);
    log(member, why + "; restarting in " + std::to_string(delay.count()) + " ms");
    back_off(member, true, delay);
  }

  /// Nothing is sent to the member for `delay`; a back-off already running and
  /// ending in a restart still does.
  void back_off(Member& member, bool then_restart, std::chrono::milliseconds delay) {
    if (const auto* running = std::get_if<BackingOff>(&member.lifecycle))
      then_restart = then_restart || running->then_restart;
    member.lifecycle = BackingOff{++last_backoff, then_restart};
    self->delayed_send(self, delay, revive_atom::value, member.id(), last_backoff);
  }

  void revive(RegistrationId id, std::uint64_t gen) {
    auto found = members.find(id);
    if (found == members.end()) return;
    auto& member = found->second;
    const auto* backing_off = std::get_if<BackingOff>(&member.lifecycle);
    if (!backing_off || backing_off->generation != gen) return;
    const bool then_restart = backing_off->then_restart;
    member.lifecycle = Serving{};
    if (then_restart) {
      member.actor = member.registration->factory(self->system());
      member.owned = true;
      (*owned)[id] = caf::actor_cast<caf::actor>(member.actor);
      self->monitor(member.actor);
      ++member.registration->status->restarts;
      if (member.metrics.restarts) member.metrics.restarts->inc();
      log(member, "restarted");
    }
    after_change(id);
  }

  /// Marks the registration failed and removes it (supervision gave up).
  void fail(Member& member, const std::string& why) {
    member.registration->status->fail(why);
    log(member, "registration failed and removed: " + why);
    remove(member.id());
  }

  // -- registration --

  void attach(const RegistrationPtr& registration, const NotificationBatchPtr& replay) {
    if (members.count(registration->id) > 0) return;
    auto& member = members[registration->id];
    member.registration = registration;
    member.supervisor = HandlerSupervisor(registration->options.supervision);
    member.order = ++next_order;
    member.group = group_key(*registration);
    member.actor = registration->handler;
    member.owned = registration->owned;
    if (member.owned) (*owned)[registration->id] = caf::actor_cast<caf::actor>(member.actor);
    if (member.actor) self->monitor(member.actor);
    if (options.metrics) member.metrics = options.metrics->handler(handler_name(*registration));
    set_period(member);
    for (std::uint32_t i = 0; replay && i < replay->items.size(); ++i) {
      Item item{replay, i, nullptr, 0, 0};
      if (!takes(member, item.get())) continue;
      ++member.replay_pending;
      member.queue.push_back(std::move(item));
    }
    auto& group = groups[member.group];
    if (options.metrics && !group.metrics.backlog)
      group.metrics = options.metrics->group(group_name(*registration));
    rebuild_route(group, member.group);
    registration->status->attached = true;
    publish_initial(group);
    arm_check();
    pump(member);
  }

  void detach(RegistrationId id) {
    auto found = members.find(id);
    if (found == members.end() || found->second.leaving()) return;
    found->second.registration->status->removed = true;
    remove(id);
  }

  /// Takes the registration out of its group now; it goes once its in-flight batch is answered.
  void remove(RegistrationId id) {
    auto& member = members.at(id);
    member.lifecycle = Leaving{};  // a pending back-off ends nothing
    rebuild_route(groups.at(member.group), member.group);
    auto queued = std::move(member.queue);
    member.queue.clear();
    for (auto& item : queued) {  // in a chain they go on; alone, they are dropped
      if (!item.route) {
        --member.replay_pending;
        continue;
      }
      forward(member, std::move(item));
    }
    member.registration->status->pending_initial = 0;
    auto key = member.group;
    if (!member.in_flight) erase(id);
    if (groups.count(key) > 0) pump_group(groups.at(key));
    arm_check();
    finish_drain();
  }

  void erase(RegistrationId id) {
    auto& member = members.at(id);
    end_retiring(member);
    end_actor(member);
    auto key = member.group;
    members.erase(id);
    auto& group = groups.at(key);
    bool empty =
        std::none_of(members.begin(), members.end(), [&](const auto& m) { return m.second.group == key; });
    if (empty && group.interior == 0) groups.erase(key);
  }

  void swap(const RegistrationPtr& registration) {
    auto found = members.find(registration->id);
    if (found == members.end() || found->second.leaving()) return;
    auto& member = found->second;
    bool new_actor = registration->handler != member.actor;
    if (new_actor) {
      if (member.in_flight && member.in_flight->actor == member.actor) {
        end_retiring(member);
        member.retiring = member.actor;  // answers its batch first
        member.retiring_owned = member.owned;
      } else {
        end_actor(member);
      }
      if (member.actor) self->demonitor(member.actor.address());
      member.actor = registration->handler;
      member.owned = registration->owned;
      owned->erase(registration->id);
      if (member.owned) (*owned)[registration->id] = caf::actor_cast<caf::actor>(member.actor);
      self->monitor(member.actor);
      member.lifecycle = Serving{};  // a pending restart is superseded by the new actor
    }
    member.registration = registration;  // group stays as it was (see the header)
    member.supervisor.update(registration->options.supervision);
    set_period(member);
    rebuild_route(groups.at(member.group), member.group);
    arm_check();
    after_change(registration->id);
  }

  void rebuild_route(Group& group, const std::string& key) {
    std::vector<const Member*> chain;
    for (const auto& [id, member] : members)
      if (member.group == key && !member.leaving()) chain.push_back(&member);
    std::sort(chain.begin(), chain.end(), [](const Member* a, const Member* b) {
      if (a->options().priority != b->options().priority)
        return a->options().priority < b->options().priority;
      return a->order < b->order;
    });
    auto route = std::make_shared<Route>();
    for (const auto* member : chain) route->push_back(member->id());
    group.route = std::move(route);
  }

  static std::string group_key(const Registration& registration) {
    if (registration.options.group.empty()) return "#" + std::to_string(registration.id);
    return "g:" + registration.options.group;
  }

  // -- resync --

  void set_period(Member& member) {
    auto requested = member.options().resync_period;
    auto period = options.resync_period.count() == 0 || requested.count() <= 0
                      ? std::chrono::milliseconds(0)
                      : std::max(requested, min_resync_period);
    if (period != member.period) member.next_resync = self->clock().now() + period;
    member.period = period;
  }

  /// (Re)arms the check at min(resync_period, every period) if that changed.
  void arm_check() {
    std::chrono::milliseconds period{0};
    if (options.resync_period.count() > 0) {
      period = std::max(options.resync_period, min_resync_period);
      for (const auto& [id, member] : members)
        if (member.period.count() > 0) period = std::min(period, member.period);
    }
    bool anyone = std::any_of(members.begin(), members.end(),
                              [](const auto& m) { return m.second.period.count() > 0; });
    if (!anyone) period = std::chrono::milliseconds(0);
    if (period == check_period) return;
    check_period = period;
    ++check_gen;
    if (period.count() > 0) self->delayed_send(self, period, check_atom::value, check_gen);
  }

  void on_check(std::uint64_t gen) {
    if (gen != check_gen || draining) return;
    auto now = self->clock().now();
    bool any = false;
    for (auto& [id, member] : members) {
      member.due = member.period.count() > 0 && now >= member.next_resync;
      if (member.due) {
        member.next_resync = now + member.period;
        any = true;
      }
    }
    if (any && upstream) send_over(self, upstream, resync_atom::value);
    self->delayed_send(self, check_period, check_atom::value, gen);
  }

  // -- helpers --

  void after_change(RegistrationId id) {
    auto found = members.find(id);
    if (found != members.end()) {
      auto& member = found->second;
      if (member.leaving() && !member.in_flight) {
        auto key = member.group;
        erase(id);
        if (groups.count(key) > 0) pump_group(groups.at(key));
      } else {
        pump_group(groups.at(member.group));
      }
    }
    finish_drain();
  }

  void end_actor(Member& member) {
    if (!member.actor) return;
    self->demonitor(member.actor.address());
    if (member.owned) self->send_exit(member.actor, caf::exit_reason::user_shutdown);
    owned->erase(member.id());
    member.actor = nullptr;
    member.owned = false;
  }

  void end_retiring(Member& member) {
    if (!member.retiring) return;
    if (member.retiring_owned) self->send_exit(member.retiring, caf::exit_reason::user_shutdown);
    member.retiring = nullptr;
    member.retiring_owned = false;
  }

  void drain() {
    draining = true;
    ++check_gen;
    finish_drain();
  }

  void finish_drain() {
    if (!draining) return;
    for (const auto& [key, group] : groups)
      if (!group.backlog.empty() || group.interior > 0) return;
    for (const auto& [id, member] : members)
      if (member.in_flight || !member.queue.empty()) return;
    std::vector<RegistrationId> ids;
    for (const auto& [id, member] : members) ids.push_back(id);
    for (auto id : ids) {
      members.at(id).registration->status->removed = true;
      erase(id);
    }
    self->quit();
  }

  void log(const Member& member, const std::string& line, std::string_view key = {}) const {
    log::warn("processor", line,
              {{"informer", options.metrics ? options.metrics->informer() : std::string()},
               {"resource", options.metrics ? options.metrics->resource() : std::string()},
               {"handler", handler_name(*member.registration)},
               {"group", member.options().group},
               {"key", key}});
  }

  static std::string describe(const Notification& n) {
    switch (n.type) {
      case NotificationType::added:
        return "add " + std::string(n.key());
      case NotificationType::updated:
        return "update " + std::string(n.key());
      case NotificationType::deleted:
        return "delete " + std::string(n.key());
    }
    return std::string(n.key());
  }
};

ProcessorImpl::behavior_type processor(ProcessorImpl::stateful_pointer<ProcessorState> self,
                                       ProcessorOptions options) {
  auto& st = self->state;
  st.self = self;
  st.options = std::move(options);
  if (st.options.max_batch == 0) st.options.max_batch = 1;
  if (st.options.group_window == 0) st.options.group_window = 1;
  self->set_exit_handler(ignore_graceful_exits(self));
  self->set_down_handler(handed_off([=](caf::down_msg& msg) { self->state.handler_down(msg); }));
  self->attach_functor([owned = st.owned](const caf::error&) {
    for (const auto& [id, actor] : *owned) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  });
  return {
      handed_off([=](upstream_atom, const ProcessorUpstream& sink) { self->state.set_upstream(sink); }),
      handed_off([=](notify_atom, const NotificationBatchPtr& batch, std::size_t credit) {
        self->state.distribute(batch, credit);
      }),
      handed_off([=](synced_atom) { self->state.options.status->distributed_synced = true; }),
      handed_off([=](attach_atom, const RegistrationPtr& registration, const NotificationBatchPtr& replay) {
        self->state.attach(registration, replay);
      }),
      handed_off([=](detach_atom, RegistrationId id) { self->state.detach(id); }),
      handed_off([=](swap_atom, const RegistrationPtr& registration) { self->state.swap(registration); }),
      handed_off([=](drain_atom) { self->state.drain(); }),
      handed_off([=](check_atom, std::uint64_t gen) { self->state.on_check(gen); }),
      handed_off([=](revive_atom, RegistrationId id, std::uint64_t gen) { self->state.revive(id, gen); }),
      handed_off([=](lag_atom, const std::string& key, std::uint64_t gen) { self->state.on_lag(key, gen); }),
  };
}

}  // namespace

ProcessorActor spawn_processor(caf::actor_system& system, ProcessorOptions options) {
  return caf::actor_cast<ProcessorActor>(system.spawn(processor, std::move(options)));
}

}  // namespace kinformer::actors
