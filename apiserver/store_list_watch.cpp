#include "apiserver/store_list_watch.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "apiserver/read_rules.hpp"
#include "apiserver/request_params.hpp"
#include "apiserver/resource_version.hpp"
#include "apiserver/watch_encoder.hpp"
#include "apiserver/watch_filter.hpp"

namespace kinformer::apiserver {

namespace {

using Clock = std::chrono::steady_clock;

// How long a watch at a future resourceVersion waits for it before Errc::too_large_rv:
// kube-apiserver's ~3 s, which the HTTP server (branch harden) also waits before its 504.
constexpr std::chrono::seconds future_watch_wait{3};

// Events pulled from the Store per callback: bounds one batch's size.
constexpr std::size_t max_events_per_batch = 1024;

bool has_cause(const ApiError& error, const char* type) {
  return std::any_of(error.causes.begin(), error.causes.end(), [&](const auto& c) { return c.type == type; });
}

// The Errc a client reading the server's Status would report (runtime/list_watch.hpp).
Error to_error(const ApiError& error) {
  if (error.code == 410) return Error{Errc::gone, error.message};
  if (error.code == 504 && has_cause(error, "ResourceVersionTooLarge"))
    return Error{Errc::too_large_rv, error.message};
  return Error{Errc::server_error, std::to_string(error.code) + " " + error.reason + ": " + error.message};
}

WatchEventType event_type(EventType type) {
  switch (type) {
    case EventType::added:
      return WatchEventType::added;
    case EventType::modified:
      return WatchEventType::modified;
    case EventType::deleted:
      return WatchEventType::deleted;
  }
  return WatchEventType::modified;
}

WatchEvent event_of(WatchEventType type, ObjectPtr object, std::uint64_t rv) {
  return WatchEvent{type, std::move(object), format_resource_version(rv), std::nullopt};
}

WatchEvent bookmark_at(std::uint64_t rv, bool initial_events_end) {
  WatchEvent bookmark{WatchEventType::bookmark, nullptr, format_resource_version(rv), std::nullopt};
  bookmark.initial_events_end = initial_events_end;
  return bookmark;
}

// The previous content at the event's RV: what a watcher whose selection the object
// left receives as DELETED (watch_filter.hpp).
ObjectPtr previous_at(const StoreEvent& event) {
  auto parsed = Object::parse(object_at_revision(event.previous->json, event.resource_version));
  return parsed ? std::move(parsed).value() : nullptr;
}

std::optional<WatchEvent> seen_by(const StoreEvent& event, const ObjectFilter& filter) {
  switch (seen_as(event, filter)) {
    case SeenAs::nothing:
      return std::nullopt;
    case SeenAs::the_event:
      return event_of(event_type(event.type), event.object->object(), event.resource_version);
    case SeenAs::added:
      return event_of(WatchEventType::added, event.object->object(), event.resource_version);
    case SeenAs::deleted_previous:
      if (auto previous = previous_at(event))
        return event_of(WatchEventType::deleted, previous, event.resource_version);
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

// -- one open watch ------------------------------------------------------------------

struct StoreListWatch::Watcher : std::enable_shared_from_this<Watcher> {
  Watcher(std::shared_ptr<Storage> s, std::shared_ptr<std::recursive_mutex> mu, ObjectFilter f, bool b,
          EventsCallback e, ClosedCallback c)
      : store(std::move(s)),
        delivery_mu(std::move(mu)),
        filter(std::move(f)),
        bookmarks(b),
        on_events(std::move(e)),
        on_closed(std::move(c)) {}

  /// Pulls what the Store has after `position` and delivers it, until nothing is
  /// left; then waits for the next write. Re-entrant: a call from inside a callback
  /// (or from the Store's wake while pulling) only asks the running loop to go on.
  void pump() {
    std::lock_guard lock(*delivery_mu);
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    do {
      again = false;
      if (done || paused) break;
      std::vector<EventPtr> batch;
      if (!store->events_after(filter.type(), position, max_events_per_batch, batch)) {
        close_locked(Error{Errc::gone, "too old resource version: " + std::to_string(position) + " (" +
                                           std::to_string(store->compacted_through(filter.type()) + 1) +
                                           "): the watch fell behind the store's history"});
        break;
      }
      if (batch.empty()) {
        // the wake may run right here (a write came in meanwhile): it sets `again`
        if (ticket == 0)
          ticket = store->notify_after(filter.type(), position, [weak = weak_from_this()] {
            if (auto self = weak.lock()) self->woken();
          });
        continue;
      }
      position = batch.back()->resource_version;
      std::vector<WatchEvent> events;
      events.reserve(batch.size());
      for (const auto& event : batch)
        if (auto seen = seen_by(*event, filter)) events.push_back(std::move(*seen));
      if (!events.empty()) on_events(std::move(events));
      again = true;
    } while (again);
    pumping = false;
  }

  void woken() {
    {
      std::lock_guard lock(*delivery_mu);
      ticket = 0;
    }
    pump();
  }

  /// Delivers `events` now (the watch's own initial batches).
  void deliver(std::vector<WatchEvent> events) {
    std::lock_guard lock(*delivery_mu);
    if (!done && !events.empty()) on_events(std::move(events));
  }

  void close(Result<void> reason) {
    std::lock_guard lock(*delivery_mu);
    close_locked(std::move(reason));
  }

  void close_locked(Result<void> reason) {
    if (done) return;
    finish_locked();
    on_closed(std::move(reason));
  }

  void stop() {
    std::lock_guard lock(*delivery_mu);
    finish_locked();
  }

  void finish_locked() {
    done = true;
    if (ticket != 0) store->cancel_wait(filter.type(), ticket);
    ticket = 0;
  }

  void pause() {
    std::lock_guard lock(*delivery_mu);
    paused = true;
  }

  void resume() {
    {
      std::lock_guard lock(*delivery_mu);
      paused = false;
    }
    pump();
  }

  /// A bookmark at the position reached once everything kept so far is delivered.
  void bookmark() {
    pump();
    std::lock_guard lock(*delivery_mu);
    if (!done && !paused && bookmarks) on_events({bookmark_at(position, false)});
  }

  /// The watch's timeout passed: end it cleanly, as the server does.
  void expire() {
    pump();
    std::lock_guard lock(*delivery_mu);
    if (done) return;
    if (bookmarks && !paused) on_events({bookmark_at(position, false)});
    close_locked({});
  }

  /// future_watch_wait after a watch asked for a revision the store had not reached:
  /// kube-apiserver's answer, "Too large resource version", unless it came meanwhile.
  void give_up_waiting() {
    std::lock_guard lock(*delivery_mu);
    const auto current = store->revision();
    if (done || current >= waiting_for) return;
    close_locked(Error{Errc::too_large_rv, "Too large resource version: " + std::to_string(waiting_for) +
                                               ", current: " + std::to_string(current)});
  }

  bool finished() {
    std::lock_guard lock(*delivery_mu);
    return done;
  }

  const std::shared_ptr<Storage> store;
  const std::shared_ptr<std::recursive_mutex> delivery_mu;  // the source's; guards everything below
  const ObjectFilter filter;
  const bool bookmarks;  // allowWatchBookmarks
  const EventsCallback on_events;
  const ClosedCallback on_closed;
  std::uint64_t position = 0;  // the newest revision passed on (or skipped as not selected)
  std::uint64_t ticket = 0;    // the Store wait, 0 = none
  std::uint64_t waiting_for = 0;  // the future revision the watch asked for, 0 = none
  bool pumping = false;        // a pump() loop is running (on this thread: we hold the lock)
  bool again = false;          // something asked the running loop to look once more
  bool paused = false;
  bool done = false;  // stopped or closed: no callback runs any more
};

namespace {

class StoreWatch final : public Watch {
 public:
  explicit StoreWatch(std::shared_ptr<StoreListWatch::Watcher> watcher) : watcher_(std::move(watcher)) {}
  ~StoreWatch() override { watcher_->stop(); }
  void stop() override { watcher_->stop(); }
  void pause() override { watcher_->pause(); }
  void resume() override { watcher_->resume(); }

 private:
  std::shared_ptr<StoreListWatch::Watcher> watcher_;
};

}  // namespace

// -- the timeout thread ----------------------------------------------------------------

// One thread per source, sleeping until the earliest watch timeout.
class StoreListWatch::Deadlines {
 public:
  Deadlines() : thread_([this] { run(); }) {}
  ~Deadlines() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  enum class Action : std::uint8_t { expire, give_up_waiting };

  void add(Clock::time_point when, std::weak_ptr<Watcher> watcher, Action action) {
    {
      std::lock_guard lock(mu_);
      // watches stopped before their timeout leave entries behind: keep only the live ones
      for (auto it = due_.begin(); it != due_.end();)
        it = it->second.watcher.expired() ? due_.erase(it) : std::next(it);
      due_.emplace(when, Due{std::move(watcher), action});
    }
    wake_.notify_one();
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      if (due_.empty()) {
        wake_.wait(lock);
        continue;
      }
      auto first = due_.begin();
      if (Clock::now() < first->first) {
        // A copy: wait_until reads its deadline again after waking, and add() may erase
        // this entry meanwhile (ASan saw the read of the freed map node).
        const Clock::time_point deadline = first->first;
        wake_.wait_until(lock, deadline);
        continue;
      }
      auto watcher = first->second.watcher.lock();
      const Action action = first->second.action;
      due_.erase(first);
      lock.unlock();
      if (watcher && action == Action::expire) watcher->expire();
      if (watcher && action == Action::give_up_waiting) watcher->give_up_waiting();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;                                         // guarded by mu_
  struct Due {
    std::weak_ptr<Watcher> watcher;
    Action action;
  };
  std::multimap<Clock::time_point, Due> due_;                     // guarded by mu_
  std::thread thread_;                                            // last: starts after the fields above exist
};

// -- StoreListWatch ----------------------------------------------------------------------

StoreListWatch::StoreListWatch(std::shared_ptr<Storage> store, const ResourceType& type,
                               std::string namespace_name)
    : store_(std::move(store)),
      type_(type),
      namespace_(std::move(namespace_name)),
      delivery_mu_(std::make_shared<std::recursive_mutex>()) {}

StoreListWatch::~StoreListWatch() {
  // the timeout thread goes first: it may be expiring a watch right now
  std::unique_ptr<Deadlines> deadlines;
  {
    std::lock_guard lock(mu_);
    deadlines.swap(deadlines_);
  }
  deadlines.reset();
}

std::vector<std::shared_ptr<StoreListWatch::Watcher>> StoreListWatch::open_watchers() {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Watcher>> open;
  std::vector<std::weak_ptr<Watcher>> kept;
  for (auto& weak : watchers_) {
    if (auto w = weak.lock(); w && !w->finished()) {
      open.push_back(w);
      kept.push_back(std::move(weak));
    }
  }
  watchers_.swap(kept);
  return open;
}

void StoreListWatch::list(const ListOptions& options, ListCallback done) {
  auto answer = [&]() -> Result<ObjectList> {
    auto filter = ObjectFilter::parse(type_, namespace_, options.label_selector, options.field_selector);
    if (!filter) return Error{Errc::invalid_selector, filter.error().message};
    if (options.limit < 0) return Error{Errc::server_error, "400 BadRequest: limit must not be negative"};
    ListParams params{options.resource_version, options.resource_version_match, options.continue_token,
                      static_cast<std::size_t>(options.limit), false};
    auto query = plan_list(*store_, type_, params);
    if (!query) return to_error(query.error());
    query->namespace_name = namespace_;
    const ObjectFilter& f = filter.value();
    query->filter = [&f](const StoredObject& o) { return f.matches(o); };
    auto page = store_->list(type_, query.value());
    if (!page) return to_error(page.error());
    ObjectList out;
    out.resource_version = format_resource_version(page->revision);
    if (!page->last_key.empty()) out.continue_token = encode_continue(page->revision, page->last_key);
    out.items.reserve(page->items.size());
    for (const auto& stored : page->items) out.items.push_back(stored->object());
    return out;
  }();
  done(std::move(answer));
}

std::unique_ptr<Watch> StoreListWatch::watch(const WatchOptions& options, EventsCallback on_events,
                                             ClosedCallback on_closed) {
  auto filter = ObjectFilter::parse(type_, namespace_, options.label_selector, options.field_selector);
  if (!filter) {
    // a watcher that never opened: it only carries the close
    auto none = ObjectFilter::parse(type_, namespace_, "", "");
    auto failed = std::make_shared<Watcher>(store_, delivery_mu_, std::move(none).value(), false,
                                            std::move(on_events), std::move(on_closed));
    failed->close(Error{Errc::invalid_selector, filter.error().message});
    return std::make_unique<StoreWatch>(failed);
  }
  auto watcher =
      std::make_shared<Watcher>(store_, delivery_mu_, std::move(filter).value(),
                                options.allow_watch_bookmarks, std::move(on_events), std::move(on_closed));
  auto start = plan_watch(
      *store_, type_, {options.resource_version, options.resource_version_match, options.send_initial_events});
  if (!start || start->final_error) {
    watcher->close(to_error(start ? *start->final_error : start.error()));
    return std::make_unique<StoreWatch>(watcher);
  }
  {
    std::lock_guard delivery(*delivery_mu_);
    if (start->replay_state) {
      Storage::ListQuery query;
      query.namespace_name = namespace_;
      const ObjectFilter& f = watcher->filter;
      query.filter = [&f](const StoredObject& o) { return f.matches(o); };
      auto state = store_->list(type_, query);
      if (!state) {
        watcher->close(to_error(state.error()));
        return std::make_unique<StoreWatch>(watcher);
      }
      watcher->position = state->revision;
      std::vector<WatchEvent> initial;
      initial.reserve(state->items.size());
      for (const auto& stored : state->items)
        initial.push_back(event_of(WatchEventType::added, stored->object(), stored->resource_version));
      watcher->deliver(std::move(initial));
      if (options.send_initial_events && options.allow_watch_bookmarks)
        watcher->deliver({bookmark_at(state->revision, true)});
    } else {
      watcher->position = start->start_after;
      if (start->start_after > store_->revision()) watcher->waiting_for = start->start_after;
    }
  }
  {
    std::lock_guard lock(mu_);
    // forget the watches that ended, so that the list stays as long as the open ones
    watchers_.erase(
        std::remove_if(watchers_.begin(), watchers_.end(), [](const auto& w) { return w.expired(); }),
        watchers_.end());
    watchers_.push_back(watcher);
    if (options.timeout_seconds > 0) {
      // beyond ten years is forever, and Clock::now() + that cannot overflow
      constexpr std::int64_t longest = std::int64_t{10} * 365 * 24 * 3600;
      if (!deadlines_) deadlines_ = std::make_unique<Deadlines>();
      deadlines_->add(Clock::now() + std::chrono::seconds(std::min(options.timeout_seconds, longest)),
                      watcher, Deadlines::Action::expire);
    }
    if (watcher->waiting_for != 0) {
      if (!deadlines_) deadlines_ = std::make_unique<Deadlines>();
      deadlines_->add(Clock::now() + future_watch_wait, watcher, Deadlines::Action::give_up_waiting);
    }
  }
  watcher->pump();
  return std::make_unique<StoreWatch>(watcher);
}

void StoreListWatch::bookmark() {
  for (const auto& w : open_watchers()) w->bookmark();
}

}  // namespace kinformer::apiserver
