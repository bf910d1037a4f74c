// Over ~600 lines on purpose: ReflectorState is one state machine (Listing, Watching, Streaming,
// Waiting in one Cycle variant) whose transitions read and write the same cycle; split by phase,
// each file would still need every other phase's state. What is not the machine lives elsewhere:
// the queue in runtime/delta_fifo, back-off in runtime/backoff, the watch decoding in runtime/.
#include "actors/reflector.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <variant>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include "actors/errors.hpp"
#include "actors/every_actor.hpp"
#include "actors/messages.hpp"
#include "actors/tsan.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors {
namespace {

using ListReplyPtr = std::shared_ptr<const Result<ObjectList>>;
using WatchEventsPtr = std::shared_ptr<const std::vector<WatchEvent>>;
using WatchClosedPtr = std::shared_ptr<const Result<void>>;

}  // namespace
}  // namespace kinformer::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::ListReplyPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::WatchEventsPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::WatchClosedPtr)

namespace kinformer::actors {
namespace {

using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

// What the reflector sends itself; clients get the narrower ReflectorActor.
using ReflectorImpl = ReflectorActor::extend<caf::reacts_to<listed_atom, std::uint64_t, ListReplyPtr>,
                                             caf::reacts_to<observe_atom, std::uint64_t, WatchEventsPtr>,
                                             caf::reacts_to<closed_atom, std::uint64_t, WatchClosedPtr>,
                                             caf::reacts_to<retry_atom, std::uint64_t>,
                                             caf::reacts_to<resync_due_atom, std::uint64_t>>;

constexpr std::int64_t default_page_size = 500;                // client-go's pager
constexpr std::int64_t min_watch_timeout_s = 300;              // timeouts in [300, 600)
constexpr milliseconds very_short_watch{1000};                 // a clean end sooner, without events, is an error
constexpr milliseconds internal_error_reset{60'000};           // quiet this long: a new retry window

enum class AfterWait : std::uint8_t { relist, rewatch, restream };

DeltaType delta_type(WatchEventType type) {
  switch (type) {
    case WatchEventType::modified: return DeltaType::updated;
    case WatchEventType::deleted: return DeltaType::deleted;
    default: return DeltaType::added;
  }
}

std::function<double()> random_or_default(std::function<double()> random) {
  if (random) return random;
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}

// -- the steps: each carries only its own data (kube-rs watcher's State) --

/// Paging through a LIST; pages go to the FIFO as one replace when the last arrives.
struct Listing {
  std::uint64_t id = 0;          // of the page request in flight
  ListOptions first_page;        // its RV and limit; after a 410 on a later page, again without limit
  ListOptions last_page;         // the request in flight
  std::vector<ObjectPtr> items;  // pages so far
  bool paged = false;            // a page had a continue token
};

/// An open watch, as both watching steps hold it.
struct OpenWatch {
  std::uint64_t id = 0;           // its callbacks carry it
  std::unique_ptr<Watch> handle;  // null once it closed
  std::size_t events = 0;         // bookmarks included
  TimePoint started{};
  bool paused = false;     // by back-pressure
  std::uint64_t low_water_request = 0;  // the depth(mark) request in flight while paused
};

/// A watch-list (§5.6) before its initial-events-end bookmark: the state so far.
struct Streaming {
  OpenWatch watch;
  std::map<std::string, ObjectPtr, std::less<>> streamed;
};

/// Following changes from last_sync_rv.
struct Watching {
  OpenWatch watch;
};

/// A back-off; `next` says what comes after it.
struct Waiting {
  std::uint64_t id = 0;  // of the retry timer
  AfterWait next = AfterWait::relist;
};

using Step = std::variant<Listing, Streaming, Watching, Waiting>;

/// One list → watch loop: what it started with, and its retry bookkeeping.
struct Cycle {
  std::uint64_t id = 0;                           // resync ticks and FIFO replies carry it
  std::string rv;                                 // the RV its list started with
  std::int64_t limit = 0;                         // its page limit
  bool retried_unavailable = false;               // the one immediate retry at RV "" after 410 / too large
  std::optional<TimePoint> first_internal_error;  // the 500s retry window (client-go's retryWithDeadline)
  TimePoint last_internal_error{};
};

struct ReflectorState {
  using Self = ReflectorImpl::stateful_pointer<ReflectorState>;

  explicit ReflectorState(Self s) : self(s) {}

  // -- the cycle: list (pages) → replace → watch --

  void list_and_watch() {
    if (cycles_started++ > 0) note_relist();
    cycle = Cycle{};
    cycle.id = next_id();
    cycle.rv = relist_rv();
    cycle.limit = page_limit(cycle.rv);
    if (options.use_watch_list) return start_watch(/*streaming=*/true);
    begin_list(cycle.rv);
  }

  std::string relist_rv() const {
    if (rv_unavailable) return "";
    return last_sync_rv.empty() ? "0" : last_sync_rv;
  }

  std::int64_t page_limit(const std::string& rv) const {
    if (options.page_size > 0) return options.page_size;
    if (paginated_result) return default_page_size;
    if (!rv.empty() && rv != "0") return 0;  // lets the server answer from its watch cache
    return default_page_size;
  }

  void begin_list(const std::string& rv) {
    Listing listing;
    listing.first_page.resource_version = rv;
    listing.first_page.limit = cycle.limit;
    listing.first_page.label_selector = options.label_selector;
    listing.first_page.field_selector = options.field_selector;
    const ListOptions first = listing.first_page;
    step = std::move(listing);  // stops a watch still open
    request_page(first);
  }

  void request_page(const ListOptions& page) {
    auto& listing = std::get<Listing>(step);
    listing.last_page = page;
    const auto id = listing.id = next_id();
    source->list(page, [weak = weak_self(), id](Result<ObjectList> reply) {
      tell(weak, listed_atom::value, id, std::make_shared<const Result<ObjectList>>(std::move(reply)));
    });
  }

  void on_page(std::uint64_t id, const Result<ObjectList>& reply) {
    auto* listing = std::get_if<Listing>(&step);
    if (!listing || id != listing->id) return;
    if (!reply) return on_list_error(reply.error());
    // No reserve(size + page) here: an exact reserve reallocates on every page, which is
    // quadratic in the list (150k pods in pages of 500 moved ~22M pointers, 9 % of the
    // informer's CPU for that list); push_back grows geometrically.
    for (const auto& object : reply->items) listing->items.push_back(known_or(object));
    if (reply->continue_token.empty()) return finish_list(reply->resource_version);
    listing->paged = true;
    ListOptions next;  // continuation pages carry no RV (kube-api-protocol.md A4.1)
    next.limit = listing->first_page.limit;
    next.continue_token = reply->continue_token;
    next.label_selector = options.label_selector;
    next.field_selector = options.field_selector;
    request_page(next);
  }

  // The cached ObjectPtr when it is the same object version, so the listed copy can be freed.
  ObjectPtr known_or(const ObjectPtr& listed) const {
    if (!options.known_object || !listed || listed->resource_version().empty()) return listed;
    ObjectPtr known = options.known_object(listed->key());
    if (known && known->resource_version() == listed->resource_version() && known->uid() == listed->uid())
      return known;
    return listed;
  }

  void on_list_error(const Error& error) {
    auto& listing = std::get<Listing>(step);
    const bool expired = error.code == Errc::gone;
    if (expired && !listing.last_page.continue_token.empty()) {
      // the pager's rule: the snapshot expired mid-way, so one full list at the first page's RV
      ListOptions full = listing.first_page;
      full.limit = 0;
      listing.items.clear();
      return request_page(full);
    }
    if (expired || error.code == Errc::too_large_rv) {
      rv_unavailable = true;
      if (!cycle.retried_unavailable) {
        cycle.retried_unavailable = true;
        return begin_list("");
      }
    }
    fail_cycle(error);
  }

  void finish_list(const std::string& list_rv) {
    auto& listing = std::get<Listing>(step);
    if (cycle.rv == "0" && listing.paged) paginated_result = true;
    rv_unavailable = false;
    if (options.metrics) {
      options.metrics->lists.inc();
      options.metrics->rv_advanced();
    }
    auto snapshot = std::make_shared<const ListSnapshot>(ListSnapshot{std::move(listing.items), list_rv});
    ask_fifo(replace_atom::value, ListSnapshotPtr(std::move(snapshot)));
    last_sync_rv = list_rv;
    arm_resync();
    start_watch();
  }

  // Watching follows last_sync_rv; streaming is the watch-list (§5.6).
  void start_watch(bool streaming = false) {
    OpenWatch open;
    open.id = next_id();
    open.started = now();
    if (streaming) {
      step = Streaming{std::move(open), {}};  // stops a watch still open
    } else {
      step = Watching{std::move(open)};
    }
    WatchOptions request;
    request.resource_version = last_sync_rv;
    request.allow_watch_bookmarks = true;
    if (streaming) {
      request.resource_version = rv_unavailable ? "" : last_sync_rv;
      request.send_initial_events = true;
      request.resource_version_match = "NotOlderThan";
    }
    request.timeout_seconds =
        min_watch_timeout_s + static_cast<std::int64_t>(min_watch_timeout_s * std::clamp(random(), 0.0, 0.999));
    request.label_selector = options.label_selector;
    request.field_selector = options.field_selector;
    auto weak = weak_self();
    const auto id = open_watch()->id;
    auto handle = source->watch(
        request,
        [weak, id](std::vector<WatchEvent> events) {
          tell(weak, observe_atom::value, id,
               std::make_shared<const std::vector<WatchEvent>>(std::move(events)));
        },
        [weak, id](Result<void> result) {
          tell(weak, closed_atom::value, id, std::make_shared<const Result<void>>(std::move(result)));
        });
    open_watch()->handle = std::move(handle);
  }

  /// The watch of the watching steps; null in the others.
  OpenWatch* open_watch() {
    if (auto* s = std::get_if<Streaming>(&step)) return &s->watch;
    if (auto* w = std::get_if<Watching>(&step)) return &w->watch;
    return nullptr;
  }

  bool watch_is_current(std::uint64_t id) {
    const auto* open = open_watch();
    return open && open->id == id;
  }

  void on_events(std::uint64_t id, const std::vector<WatchEvent>& events) {
    if (!watch_is_current(id)) return;
    Deltas deltas;
    deltas.reserve(events.size());
    std::optional<Error> ended;
    for (const auto& event : events) {
      if (event.type == WatchEventType::error) {
        const Error error = event.error.value_or(Error{Errc::server_error, "watch error event without a status"});
        if (error.code == Errc::decode_failed) {
          report(error);  // skipped; the stream goes on
          continue;
        }
        ended = error;
        break;
      }
      // the bookmark that ends a watch-list turns Streaming into Watching mid-batch
      auto* streaming = std::get_if<Streaming>(&step);
      if (event.type != WatchEventType::bookmark) {
        if (!event.object) {
          report(Error{Errc::decode_failed, "watch event without an object"});
          continue;
        }
        if (!options.expected_kind.empty() && event.object->kind() != options.expected_kind) {
          report(Error{Errc::decode_failed, "watch event of kind " + std::string(event.object->kind()) +
                                                ", expected " + options.expected_kind + ": skipped"});
          continue;
        }
        if (streaming) {
          stream(*streaming, event);
          ++streaming->watch.events;
          note_event(event.type);
          continue;
        }
        deltas.push_back(Delta{delta_type(event.type), event.object});
      } else if (streaming) {
        ++streaming->watch.events;
        note_event(event.type);
        if (event.initial_events_end) finish_stream(event.resource_version);
        continue;
      }
      last_sync_rv = event.resource_version.empty() && event.object ? std::string(event.object->resource_version())
                                                                     : event.resource_version;
      ++open_watch()->events;
      note_event(event.type);
    }
    if (!deltas.empty()) push_deltas(std::move(deltas));
    if (ended) on_watch_error(*ended);
  }

  void stream(Streaming& streaming, const WatchEvent& event) const {
    const std::string key(event.object->key());
    if (event.type == WatchEventType::deleted) {
      streaming.streamed.erase(key);
    } else {
      streaming.streamed.insert_or_assign(key, known_or(event.object));
    }
  }

  // The watch-list's initial state is complete: replace, then go on with the same watch.
  void finish_stream(const std::string& rv) {
    auto& streaming = std::get<Streaming>(step);
    std::vector<ObjectPtr> listed;
    listed.reserve(streaming.streamed.size());
    for (auto& [key, object] : streaming.streamed) listed.push_back(std::move(object));
    OpenWatch open = std::move(streaming.watch);
    step = Watching{std::move(open)};
    rv_unavailable = false;
    if (options.metrics) {
      options.metrics->lists.inc();
      options.metrics->rv_advanced();
    }
    ask_fifo(replace_atom::value,
             ListSnapshotPtr(std::make_shared<const ListSnapshot>(ListSnapshot{std::move(listed), rv})));
    last_sync_rv = rv;
    arm_resync();
  }

  void on_closed(std::uint64_t id, const Result<void>& result) {
    if (!watch_is_current(id)) return;
    close_watch();
    if (!result) return on_watch_error(result.error());
    const OpenWatch& closed = *open_watch();
    const bool very_short = closed.events == 0 && now() - closed.started < very_short_watch;
    if (std::holds_alternative<Streaming>(step)) {
      if (very_short) {
        return fall_back_to_list(Error{Errc::server_error, "very short watch-list: closed within 1s without events"});
      }
      note_watch_restart("closed");
      return start_watch(/*streaming=*/true);  // closed before its bookmark: stream again
    }
    cycle.first_internal_error.reset();
    if (very_short) {
      return fail_cycle(
          Error{Errc::server_error, "very short watch: the watch closed within 1s without events"},
          "very_short_watch");
    }
    note_watch_restart("closed");
    start_watch();  // a clean end, e.g. timeoutSeconds: go on from the last RV
  }

  void on_watch_error(const Error& error) {
    if (std::holds_alternative<Streaming>(step)) return on_stream_error(error);
    close_watch();
    report(error);
    note_internal_error(error);
    switch (error.code) {
      case Errc::too_many_requests:
      case Errc::connection_failed: {
        auto delay = backoff.next(now());
        if (auto wait = retry_after(error)) delay = std::max(delay, milliseconds(*wait));
        rewatch_reason = to_string(error.code);
        return wait_then(AfterWait::rewatch, delay);
      }
      case Errc::server_error:
        if (internal_error_retry_allowed()) {
          note_watch_restart("server_error");
          return start_watch();
        }
        return restart_cycle(to_string(error.code));
      default:
        return restart_cycle(to_string(error.code));  // 410 and the rest: relist after back-off
    }
  }

  // §5.6: 410 / too large → stream again at RV ""; 429 / refused → back off; else LIST.
  void on_stream_error(const Error& error) {
    close_watch();
    switch (error.code) {
      case Errc::gone:
      case Errc::too_large_rv:
        rv_unavailable = true;
        if (!cycle.retried_unavailable) {
          cycle.retried_unavailable = true;
          note_watch_restart(to_string(error.code));
          return start_watch(/*streaming=*/true);
        }
        return fall_back_to_list(error);
      case Errc::too_many_requests:
      case Errc::connection_failed:
        report(error);
        rewatch_reason = to_string(error.code);
        return wait_then(AfterWait::restream, backoff.next(now()));
      default:
        return fall_back_to_list(error);
    }
  }

  void fall_back_to_list(const Error& error) {
    report(error);
    begin_list(relist_rv());
  }

  // client-go's retryWithDeadline for 500s: a window from the first error of a run
  void note_internal_error(const Error& error) {
    if (error.code != Errc::server_error) {
      cycle.first_internal_error.reset();
      return;
    }
    const auto t = now();
    if (cycle.first_internal_error && t - cycle.last_internal_error > internal_error_reset)
      cycle.first_internal_error.reset();
    if (!cycle.first_internal_error) cycle.first_internal_error = t;
    cycle.last_internal_error = t;
  }

  bool internal_error_retry_allowed() {
    if (options.max_internal_error_retry <= milliseconds(0) || !cycle.first_internal_error) return false;
    if (now() - *cycle.first_internal_error <= options.max_internal_error_retry) return true;
    cycle.first_internal_error.reset();
    return false;
  }

  // -- ending a cycle, waiting --

  /// `cause` labels the relist; "" = the error's code.
  void fail_cycle(const Error& error, std::string_view cause = {}) {
    report(error);
    restart_cycle(cause.empty() ? to_string(error.code) : cause);
  }

  void restart_cycle(std::string_view cause) {
    relist_cause = cause;
    close_watch();
    cycle.id = next_id();  // silences the resync timer and late FIFO replies of this cycle
    wait_then(AfterWait::relist, backoff.next(now()));
  }

  void wait_then(AfterWait next, milliseconds delay) {
    const auto id = next_id();
    step = Waiting{id, next};
    self->delayed_send(self, delay, retry_atom::value, id);
  }

  void on_retry(std::uint64_t id) {
    const auto* waiting = std::get_if<Waiting>(&step);
    if (!waiting || id != waiting->id) return;
    if (waiting->next == AfterWait::relist) return list_and_watch();
    note_watch_restart(rewatch_reason);
    start_watch(/*streaming=*/waiting->next == AfterWait::restream);
  }

  // -- resync timer --

  void arm_resync() {
    if (options.resync_period <= milliseconds(0)) return;
    self->delayed_send(self, options.resync_period, resync_due_atom::value, cycle.id);
  }

  void on_resync_due(std::uint64_t id) {
    if (id != cycle.id) return;  // a timer of an ended cycle
    arm_resync();
    if (options.should_resync && !options.should_resync()) return;
    ask_fifo(resync_atom::value);
  }

  // -- the FIFO and back-pressure --

  // One deltas batch in flight at a time: what arrives meanwhile waits here and goes
  // as one batch when the FIFO answers. A request per arrival would leave thousands
  // unanswered under load, and CAF 0.17's table of pending responses costs time
  // linear in its size for every answer.
  void push_deltas(Deltas deltas) {
    if (buffered.empty()) {
      buffered = std::move(deltas);
    } else {
      buffered.insert(buffered.end(), std::make_move_iterator(deltas.begin()),
                      std::make_move_iterator(deltas.end()));
    }
    if (deltas_in_flight == 0) send_buffered();
    note_depth(fifo_depth);  // the buffer counts towards the high-water mark
  }

  /// Sends what is buffered now; replace and resync call it first, so the FIFO
  /// still gets everything in arrival order.
  void send_buffered() {
    if (buffered.empty()) return;
    auto batch = std::make_shared<const Deltas>(std::move(buffered));
    buffered = Deltas{};
    ++deltas_in_flight;
    detail::handing_over();  // ThreadSanitizer annotations: actors/tsan.hpp
    self->request(fifo, caf::infinite, deltas_atom::value, DeltasPtr(std::move(batch)))
        .then(handed_off([self = self](std::size_t depth) { self->state.on_deltas_taken(depth); }),
              handed_off([self = self, id = cycle.id](caf::error& e) { self->state.on_deltas_failed(id, e); }));
  }

  void on_deltas_taken(std::size_t depth) {
    --deltas_in_flight;
    if (deltas_in_flight == 0) send_buffered();
    note_depth(depth);
  }

  void on_deltas_failed(std::uint64_t cycle_id, const caf::error& error) {
    --deltas_in_flight;
    fifo_failed(cycle_id, error);
  }

  // Every producer call answers the FIFO's depth; a failure ends the cycle it belongs to.
  template <class... Ts>
  void ask_fifo(Ts&&... xs) {
    send_buffered();
    detail::handing_over();  // ThreadSanitizer annotations: actors/tsan.hpp
    self->request(fifo, caf::infinite, std::forward<Ts>(xs)...)
        .then(handed_off([self = self](std::size_t depth) { self->state.note_depth(depth); }),
              handed_off([self = self, id = cycle.id](caf::error& e) { self->state.fifo_failed(id, e); }));
  }

  void fifo_failed(std::uint64_t cycle_id, const caf::error& error) {
    if (cycle_id != cycle.id) return;
    fail_cycle(from_caf_error(error));
  }

  /// `depth` is the FIFO's last answer; the events buffered here count on top of it.
  void note_depth(std::size_t depth) {
    fifo_depth = depth;
    auto* open = open_watch();
    if (depth + buffered.size() <= options.high_water_mark || !open || open->paused || !open->handle) return;
    open->paused = true;
    open->handle->pause();
    open->low_water_request = next_id();
    ask_low_water(open->low_water_request);
  }

  bool is_current_low_water_request(std::uint64_t id) {
    const auto* open = open_watch();
    return open && open->paused && open->low_water_request == id;
  }

  // The FIFO answers once its depth is at or below the low-water mark.
  void ask_low_water(std::uint64_t id) {
    self->request(fifo, caf::infinite, depth_atom::value, options.high_water_mark / 2)
        .then(handed_off([self = self, id](std::size_t depth) { self->state.on_low_water_depth(id, depth); }),
              handed_off([self = self, cycle_id = cycle.id](caf::error& e) { self->state.fifo_failed(cycle_id, e); }));
  }

  void on_low_water_depth(std::uint64_t id, std::size_t depth) {
    if (!is_current_low_water_request(id)) return;
    fifo_depth = depth;
    auto* open = open_watch();
    open->paused = false;
    if (open->handle) open->handle->resume();
  }

  // -- helpers --

  /// Stops the open watch (if any) and forgets its pause; the step stays until the next one.
  void close_watch() {
    if (auto* open = open_watch()) {
      open->handle.reset();
      open->paused = false;
      open->low_water_request = 0;
    }
  }

  std::uint64_t next_id() { return ++last_id; }

  void report(const Error& error) const {
    log::warn("reflector", "list/watch error",
              {{"informer", informer_name()}, {"resource", resource_name()}, {"error", error.to_string()}});
    if (options.metrics) options.metrics->error(to_string(error.code));
    if (options.watch_error_handler) options.watch_error_handler(error);
  }

  // -- metrics and log lines (actors/informer_metrics.hpp) --

  std::string informer_name() const { return options.metrics ? options.metrics->informer() : std::string(); }
  std::string resource_name() const {
    return options.metrics ? options.metrics->resource() : source->resource();
  }

  void note_relist() const {
    log::info("reflector", "relisting",
              {{"informer", informer_name()}, {"resource", resource_name()}, {"cause", relist_cause}});
    if (options.metrics) options.metrics->relisted(relist_cause);
  }

  void note_watch_restart(std::string_view reason) const {
    log::debug("reflector", "watching again",
               {{"informer", informer_name()},
                {"resource", resource_name()},
                {"reason", reason},
                {"rv", last_sync_rv}});
    if (options.metrics) options.metrics->watch_restarted(reason);
  }

  void note_event(WatchEventType type) const {
    if (!options.metrics) return;
    switch (type) {
      case WatchEventType::added:
        options.metrics->events_added.inc();
        break;
      case WatchEventType::modified:
        options.metrics->events_modified.inc();
        break;
      case WatchEventType::deleted:
        options.metrics->events_deleted.inc();
        break;
      default:
        options.metrics->events_bookmark.inc();
        break;
    }
    options.metrics->rv_advanced();
  }

  TimePoint now() const { return self->clock().now(); }

  caf::weak_actor_ptr weak_self() const { return caf::actor_cast<caf::weak_actor_ptr>(self); }

  // From a ListWatch callback, on any thread; a quit reflector is simply gone.
  template <class... Ts>
  static void tell(const caf::weak_actor_ptr& weak, Ts&&... xs) {
    if (auto strong = weak.lock()) {
      detail::handing_over();  // the payload was built on the source's thread
      caf::anon_send(caf::actor_cast<ReflectorImpl>(strong), std::forward<Ts>(xs)...);
    }
  }

  Self self;
  std::shared_ptr<ListWatch> source;
  DeltaFIFOActor fifo;
  ReflectorOptions options;
  std::function<double()> random;
  Backoff backoff{{}, {}};

  // across cycles
  std::string last_sync_rv;
  std::uint64_t cycles_started = 0;  // a cycle after the first is a relist
  std::string relist_cause;          // what ended the last cycle (metrics and logs)
  std::string rewatch_reason;        // what the back-off before a re-watch is for
  bool rv_unavailable = false;    // the last list met 410 / too large: list at ""
  bool paginated_result = false;  // sticky: an RV "0" list came back in pages

  // the FIFO's side
  Deltas buffered;               // events waiting for the batch in flight to be taken
  std::size_t deltas_in_flight = 0;   // deltas requests unanswered (more than one only around a replace or resync)
  std::size_t fifo_depth = 0;         // the FIFO's last answered depth

  Cycle cycle;                // the current list → watch loop
  Step step;                  // what the reflector does now, with that step's own data
  std::uint64_t last_id = 0;  // ids of steps, cycles and timers: a message with an old one is stale
};

ReflectorImpl::behavior_type reflector(ReflectorImpl::stateful_pointer<ReflectorState> self,
                                       std::shared_ptr<ListWatch> source, DeltaFIFOActor fifo,
                                       ReflectorOptions options) {
  declare_brief(self);
  auto& st = self->state;
  st.source = std::move(source);
  st.fifo = std::move(fifo);
  st.random = random_or_default(options.random);
  st.backoff = Backoff(options.backoff, st.random);
  st.options = std::move(options);
  st.list_and_watch();
  return {
      handed_off([=](last_rv_atom) { return self->state.last_sync_rv; }),
      handed_off([=](listed_atom, std::uint64_t id, const ListReplyPtr& reply) { self->state.on_page(id, *reply); }),
      handed_off([=](observe_atom, std::uint64_t id, const WatchEventsPtr& events) {
        self->state.on_events(id, *events);
      }),
      handed_off([=](closed_atom, std::uint64_t id, const WatchClosedPtr& result) {
        self->state.on_closed(id, *result);
      }),
      handed_off([=](retry_atom, std::uint64_t id) { self->state.on_retry(id); }),
      handed_off([=](resync_due_atom, std::uint64_t id) { self->state.on_resync_due(id); }),
  };
}

}  // namespace

ReflectorActor spawn_reflector(caf::actor_system& system, std::shared_ptr<ListWatch> source,
                               DeltaFIFOActor fifo, ReflectorOptions options) {
  return system.spawn(reflector, std::move(source), std::move(fifo), std::move(options));
}

}  // namespace kinformer::actors
