#include "actors/reflector.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "actors/tsan.hpp"

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
                                             caf::reacts_to<resync_due_atom, std::uint64_t>,
                                             caf::reacts_to<poll_atom, std::uint64_t>>;

constexpr std::int64_t default_page_size = 500;                // client-go's pager
constexpr std::int64_t min_watch_timeout_s = 300;              // timeouts in [300, 600)
constexpr milliseconds very_short_watch{1000};                 // a clean end sooner, without events, is an error
constexpr milliseconds internal_error_reset{60'000};           // quiet this long: a new retry window

enum class Step : std::uint8_t { listing, streaming, watching, waiting };  // streaming: watch-list before its bookmark
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

struct ReflectorState {
  using Self = ReflectorImpl::stateful_pointer<ReflectorState>;

  explicit ReflectorState(Self s) : self(s) {}

  // -- the cycle: list (pages) → replace → watch --

  void list_and_watch() {
    ++cycle;
    retried_unavailable = false;
    first_internal_error.reset();
    cycle_rv = relist_rv();
    cycle_limit = page_limit(cycle_rv);
    if (options.use_watch_list) return start_watch(Step::streaming);
    begin_list(cycle_rv);
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
    step = Step::listing;
    items.clear();
    paged = false;
    first_page = ListOptions{};
    first_page.resource_version = rv;
    first_page.limit = cycle_limit;
    first_page.label_selector = options.label_selector;
    first_page.field_selector = options.field_selector;
    request_page(first_page);
  }

  void request_page(const ListOptions& page) {
    last_page = page;
    const auto gen = ++list_gen;
    options.source->list(page, [weak = weak_self(), gen](Result<ObjectList> reply) {
      tell(weak, listed_atom::value, gen, std::make_shared<const Result<ObjectList>>(std::move(reply)));
    });
  }

  void on_page(std::uint64_t gen, const Result<ObjectList>& reply) {
    if (gen != list_gen || step != Step::listing) return;
    if (!reply) return on_list_error(reply.error());
    items.reserve(items.size() + reply->items.size());
    for (const auto& object : reply->items) items.push_back(known_or(object));
    if (reply->continue_token.empty()) return finish_list(reply->resource_version);
    paged = true;
    ListOptions next;  // continuation pages carry no RV (kube-api-protocol.md A4.1)
    next.limit = first_page.limit;
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
    const bool expired = error.code == Errc::gone;
    if (expired && !last_page.continue_token.empty()) {
      // the pager's rule: the snapshot expired mid-way, so one full list at the first page's RV
      ListOptions full = first_page;
      full.limit = 0;
      items.clear();
      return request_page(full);
    }
    if (expired || error.code == Errc::too_large_rv) {
      rv_unavailable = true;
      if (!retried_unavailable) {
        retried_unavailable = true;
        return begin_list("");
      }
    }
    fail_cycle(error);
  }

  void finish_list(const std::string& list_rv) {
    if (cycle_rv == "0" && paged) paginated_result = true;
    rv_unavailable = false;
    auto snapshot = std::make_shared<const ListSnapshot>(ListSnapshot{std::move(items), list_rv});
    items.clear();
    ask_fifo(replace_atom::value, ListSnapshotPtr(std::move(snapshot)));
    last_sync_rv = list_rv;
    arm_resync();
    start_watch();
  }

  // Step::watching follows last_sync_rv; Step::streaming is the watch-list (§5.6).
  void start_watch(Step mode = Step::watching) {
    step = mode;
    streamed.clear();
    close_watch();
    const auto gen = ++watch_gen;
    watch_events = 0;
    watch_started = now();
    WatchOptions request;
    request.resource_version = last_sync_rv;
    request.allow_watch_bookmarks = true;
    if (mode == Step::streaming) {
      request.resource_version = rv_unavailable ? "" : last_sync_rv;
      request.send_initial_events = true;
      request.resource_version_match = "NotOlderThan";
    }
    request.timeout_seconds =
        min_watch_timeout_s + static_cast<std::int64_t>(min_watch_timeout_s * std::clamp(random(), 0.0, 0.999));
    request.label_selector = options.label_selector;
    request.field_selector = options.field_selector;
    auto weak = weak_self();
    watch = options.source->watch(
        request,
        [weak, gen](std::vector<WatchEvent> events) {
          tell(weak, observe_atom::value, gen, std::make_shared<const std::vector<WatchEvent>>(std::move(events)));
        },
        [weak, gen](Result<void> result) {
          tell(weak, closed_atom::value, gen, std::make_shared<const Result<void>>(std::move(result)));
        });
  }

  bool watch_is_current(std::uint64_t gen) const {
    return gen == watch_gen && (step == Step::watching || step == Step::streaming);
  }

  void on_events(std::uint64_t gen, const std::vector<WatchEvent>& events) {
    if (!watch_is_current(gen)) return;
    auto deltas = std::make_shared<WatchDeltas>();
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
        if (step == Step::streaming) {
          stream(event);
          ++watch_events;
          continue;
        }
        deltas->push_back(WatchDelta{delta_type(event.type), event.object});
      } else if (step == Step::streaming) {
        ++watch_events;
        if (event.initial_events_end) finish_stream(event.resource_version);
        continue;
      }
      last_sync_rv = event.resource_version.empty() && event.object ? std::string(event.object->resource_version())
                                                                     : event.resource_version;
      ++watch_events;
    }
    if (!deltas->empty()) push_deltas(std::move(deltas));
    if (ended) on_watch_error(*ended);
  }

  void stream(const WatchEvent& event) {
    const std::string key(event.object->key());
    if (event.type == WatchEventType::deleted) {
      streamed.erase(key);
    } else {
      streamed.insert_or_assign(key, known_or(event.object));
    }
  }

  // The watch-list's initial state is complete: replace, then go on with the same watch.
  void finish_stream(const std::string& rv) {
    std::vector<ObjectPtr> listed;
    listed.reserve(streamed.size());
    for (auto& [key, object] : streamed) listed.push_back(std::move(object));
    streamed.clear();
    rv_unavailable = false;
    ask_fifo(replace_atom::value,
             ListSnapshotPtr(std::make_shared<const ListSnapshot>(ListSnapshot{std::move(listed), rv})));
    last_sync_rv = rv;
    arm_resync();
    step = Step::watching;
  }

  void on_closed(std::uint64_t gen, const Result<void>& result) {
    if (!watch_is_current(gen)) return;
    close_watch();
    if (!result) return on_watch_error(result.error());
    if (step == Step::streaming) {
      if (watch_events == 0 && now() - watch_started < very_short_watch) {
        return fall_back_to_list(Error{Errc::server_error, "very short watch-list: closed within 1s without events"});
      }
      return start_watch(Step::streaming);  // closed before its bookmark: stream again
    }
    first_internal_error.reset();
    if (watch_events == 0 && now() - watch_started < very_short_watch) {
      return fail_cycle(Error{Errc::server_error, "very short watch: the watch closed within 1s without events"});
    }
    start_watch();  // a clean end, e.g. timeoutSeconds: go on from the last RV
  }

  void on_watch_error(const Error& error) {
    if (step == Step::streaming) return on_stream_error(error);
    close_watch();
    report(error);
    note_internal_error(error);
    switch (error.code) {
      case Errc::too_many_requests:
      case Errc::connection_failed: {
        auto delay = backoff.next(now());
        if (auto wait = retry_after(error)) delay = std::max(delay, milliseconds(*wait));
        return wait_then(AfterWait::rewatch, delay);
      }
      case Errc::server_error:
        if (internal_error_retry_allowed()) return start_watch();
        return restart_cycle();
      default:
        return restart_cycle();  // 410 and the rest: relist after back-off
    }
  }

  // §5.6: 410 / too large → stream again at RV ""; 429 / refused → back off; else LIST.
  void on_stream_error(const Error& error) {
    close_watch();
    switch (error.code) {
      case Errc::gone:
      case Errc::too_large_rv:
        rv_unavailable = true;
        if (!retried_unavailable) {
          retried_unavailable = true;
          return start_watch(Step::streaming);
        }
        return fall_back_to_list(error);
      case Errc::too_many_requests:
      case Errc::connection_failed:
        report(error);
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
      first_internal_error.reset();
      return;
    }
    const auto t = now();
    if (first_internal_error && t - last_internal_error > internal_error_reset) first_internal_error.reset();
    if (!first_internal_error) first_internal_error = t;
    last_internal_error = t;
  }

  bool internal_error_retry_allowed() {
    if (options.max_internal_error_retry <= milliseconds(0) || !first_internal_error) return false;
    if (now() - *first_internal_error <= options.max_internal_error_retry) return true;
    first_internal_error.reset();
    return false;
  }

  // -- ending a cycle, waiting --

  void fail_cycle(const Error& error) {
    report(error);
    restart_cycle();
  }

  void restart_cycle() {
    close_watch();
    ++cycle;  // silences the resync timer and late FIFO replies of this cycle
    wait_then(AfterWait::relist, backoff.next(now()));
  }

  void wait_then(AfterWait next, milliseconds delay) {
    step = Step::waiting;
    after_wait = next;
    self->delayed_send(self, delay, retry_atom::value, ++wait_gen);
  }

  void on_retry(std::uint64_t gen) {
    if (gen != wait_gen || step != Step::waiting) return;
    if (after_wait == AfterWait::relist) return list_and_watch();
    start_watch(after_wait == AfterWait::restream ? Step::streaming : Step::watching);
  }

  // -- resync timer --

  void arm_resync() {
    if (options.resync_period <= milliseconds(0)) return;
    self->delayed_send(self, options.resync_period, resync_due_atom::value, cycle);
  }

  void on_resync_due(std::uint64_t gen) {
    if (gen != cycle) return;  // a timer of an ended cycle
    arm_resync();
    if (options.should_resync && !options.should_resync()) return;
    ask_fifo(resync_atom::value);
  }

  // -- the FIFO and back-pressure --

  void push_deltas(WatchDeltasPtr deltas) { ask_fifo(deltas_atom::value, std::move(deltas)); }

  // Every producer call answers the FIFO's depth; a failure ends the cycle it belongs to.
  template <class... Ts>
  void ask_fifo(Ts&&... xs) {
    detail::handing_over();  // ThreadSanitizer annotations: actors/tsan.hpp
    self->request(options.fifo, caf::infinite, std::forward<Ts>(xs)...)
        .then(
            [self = self](std::size_t depth) {
              const detail::HandlerScope handoff;
              self->state.note_depth(depth);
            },
            [self = self, gen = cycle](caf::error& e) { self->state.fifo_failed(gen, e); });
  }

  void fifo_failed(std::uint64_t gen, const caf::error& error) {
    if (gen != cycle) return;
    fail_cycle(from_caf_error(error));
  }

  void note_depth(std::size_t depth) {
    if (depth <= options.high_water_mark || paused || !watch) return;
    paused = true;
    watch->pause();
    self->delayed_send(self, options.pause_poll, poll_atom::value, ++poll_gen);
  }

  void on_poll(std::uint64_t gen) {
    if (gen != poll_gen || !paused) return;
    self->request(options.fifo, caf::infinite, depth_atom::value)
        .then(
            [self = self, gen](std::size_t depth) {
              const detail::HandlerScope handoff;
              self->state.on_polled_depth(gen, depth);
            },
              [self = self, cycle = cycle](caf::error& e) { self->state.fifo_failed(cycle, e); });
  }

  void on_polled_depth(std::uint64_t gen, std::size_t depth) {
    if (gen != poll_gen || !paused) return;
    if (depth > options.high_water_mark / 2) {
      self->delayed_send(self, options.pause_poll, poll_atom::value, gen);
      return;
    }
    paused = false;
    if (watch) watch->resume();
  }

  // -- helpers --

  /// Stops the watch (if any) and forgets its pause.
  void close_watch() {
    watch.reset();
    paused = false;
    ++poll_gen;
  }

  void report(const Error& error) const {
    if (options.watch_error_handler) options.watch_error_handler(error);
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
  ReflectorOptions options;
  std::function<double()> random;
  Backoff backoff{{}, {}};

  Step step = Step::listing;
  std::uint64_t cycle = 0;  // one list → watch loop; resync ticks and FIFO replies carry it
  std::string last_sync_rv;
  bool rv_unavailable = false;    // the last list met 410 / too large: list at ""
  bool paginated_result = false;  // sticky: an RV "0" list came back in pages

  // the list of this cycle
  std::string cycle_rv;          // the RV the cycle's list started with
  std::int64_t cycle_limit = 0;
  bool retried_unavailable = false;
  std::uint64_t list_gen = 0;    // one per page request
  ListOptions first_page;
  ListOptions last_page;
  std::vector<ObjectPtr> items;  // pages so far
  std::map<std::string, ObjectPtr, std::less<>> streamed;  // the watch-list's state so far
  bool paged = false;

  // the watch
  std::unique_ptr<Watch> watch;  // null unless one is open
  std::uint64_t watch_gen = 0;
  std::size_t watch_events = 0;
  TimePoint watch_started{};
  std::optional<TimePoint> first_internal_error;
  TimePoint last_internal_error{};
  bool paused = false;
  std::uint64_t poll_gen = 0;

  AfterWait after_wait = AfterWait::relist;
  std::uint64_t wait_gen = 0;
};

ReflectorImpl::behavior_type reflector(ReflectorImpl::stateful_pointer<ReflectorState> self,
                                       ReflectorOptions options) {
  auto& st = self->state;
  st.random = random_or_default(options.random);
  st.backoff = Backoff(options.backoff, st.random);
  st.options = std::move(options);
  st.list_and_watch();
  return {
      [=](last_rv_atom) { return self->state.last_sync_rv; },
      // HandlerScope: ThreadSanitizer annotations (actors/tsan.hpp)
      [=](listed_atom, std::uint64_t gen, const ListReplyPtr& reply) {
        const detail::HandlerScope handoff;
        self->state.on_page(gen, *reply);
      },
      [=](observe_atom, std::uint64_t gen, const WatchEventsPtr& events) {
        const detail::HandlerScope handoff;
        self->state.on_events(gen, *events);
      },
      [=](closed_atom, std::uint64_t gen, const WatchClosedPtr& result) {
        const detail::HandlerScope handoff;
        self->state.on_closed(gen, *result);
      },
      [=](retry_atom, std::uint64_t gen) { self->state.on_retry(gen); },
      [=](resync_due_atom, std::uint64_t gen) { self->state.on_resync_due(gen); },
      [=](poll_atom, std::uint64_t gen) { self->state.on_poll(gen); },
  };
}

}  // namespace

ReflectorActor spawn_reflector(caf::actor_system& system, ReflectorOptions options) {
  return system.spawn(reflector, std::move(options));
}

}  // namespace kinformer::actors
