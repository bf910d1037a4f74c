#include "runtime/memory_source.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <charconv>
#include <utility>

namespace kinformer {

// -- one open watch --

struct MemorySource::Watcher {
  struct Item {
    std::vector<WatchEvent> events;
    std::optional<Result<void>> close;  // set: this item ends the watch
  };

  Watcher(WatchOptions o, EventsCallback e, ClosedCallback c, std::shared_ptr<std::recursive_mutex> d)
      : options(std::move(o)), on_events(std::move(e)), on_closed(std::move(c)), dispatch_mu(std::move(d)) {}

  /// Delivers `item` now, or keeps it while paused; drops it after stop or close.
  void post(Item item) {
    std::lock_guard lock(mu);
    if (stopped || ending) return;
    if (item.close) {
      ending = true;
      done = true;
    }
    if (paused) {
      kept.push_back(std::move(item));
      return;
    }
    invoke_locked(item);
  }

  void stop() {
    std::lock_guard lock(mu);
    stopped = true;
    done = true;
    kept.clear();
  }

  void pause() {
    std::lock_guard lock(mu);
    paused = true;
  }

  void resume() {
    std::lock_guard dispatch(*dispatch_mu);  // same lock order as a change's delivery
    std::lock_guard lock(mu);
    paused = false;
    // a callback may pause or stop again: check before each item
    while (!paused && !stopped && !kept.empty()) {
      Item item = std::move(kept.front());
      kept.pop_front();
      invoke_locked(item);
    }
  }

  void invoke_locked(Item& item) {
    if (item.close) {
      on_closed(std::move(*item.close));
    } else if (!item.events.empty()) {
      on_events(std::move(item.events));
    }
  }

  const WatchOptions options;
  const EventsCallback on_events;
  const ClosedCallback on_closed;
  const std::shared_ptr<std::recursive_mutex> dispatch_mu;  // the source's; outlives it
  std::recursive_mutex mu;   // held while a callback of this watch runs
  bool stopped = false;      // guarded by mu
  bool ending = false;       // guarded by mu: the close is delivered or kept
  bool paused = false;       // guarded by mu
  std::deque<Item> kept;     // guarded by mu: what arrived while paused
  std::atomic<bool> done{false};  // stopped || ending, readable without mu
};

namespace {

class MemoryWatch final : public Watch {
 public:
  explicit MemoryWatch(std::shared_ptr<MemorySource::Watcher> watcher) : watcher_(std::move(watcher)) {}
  ~MemoryWatch() override { watcher_->stop(); }
  void stop() override { watcher_->stop(); }
  void pause() override { watcher_->pause(); }
  void resume() override { watcher_->resume(); }

 private:
  std::shared_ptr<MemorySource::Watcher> watcher_;
};

std::optional<std::uint64_t> parse_rv(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || text.empty()) return std::nullopt;
  return value;
}

bool inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

// `object` with metadata.resourceVersion set to `rv`, by editing its JSON text:
// replace the value where there is one, else insert the member before "name".
ObjectPtr stamp(const ObjectPtr& object, std::uint64_t rv) {
  const std::string_view json = object->json();
  const std::string text = std::to_string(rv);
  std::string out(json);
  const std::string_view old_rv = object->resource_version();
  const auto empty_member = json.find(R"("resourceVersion":"")");
  if (!old_rv.empty() && inside(old_rv, json)) {
    out.replace(static_cast<std::size_t>(old_rv.data() - json.data()), old_rv.size(), text);
  } else if (old_rv.empty() && empty_member != std::string_view::npos) {
    out.insert(empty_member + std::string_view(R"("resourceVersion":")").size(), text);
  } else {
    const std::string_view name = object->name();
    std::size_t at = std::string_view::npos;
    if (inside(name, json)) at = json.rfind("\"name\"", static_cast<std::size_t>(name.data() - json.data()));
    if (at == std::string_view::npos) {
      at = json.find("\"metadata\"");
      if (at != std::string_view::npos) at = json.find('{', at);
      if (at != std::string_view::npos) ++at;
    }
    if (at == std::string_view::npos) return object;
    out.insert(at, R"("resourceVersion":")" + text + "\",");
  }
  auto parsed = Object::parse(out);
  assert(parsed && "stamping a resourceVersion broke the JSON");
  return parsed ? std::move(parsed).value() : object;
}

WatchEvent event_of(WatchEventType type, const ObjectPtr& object) {
  return WatchEvent{type, object, std::string(object->resource_version()), std::nullopt};
}

}  // namespace

// -- MemorySource --

MemorySource::MemorySource(MemorySourceOptions options)
    : options_(std::move(options)), dispatch_mu_(std::make_shared<std::recursive_mutex>()) {}

MemorySource::~MemorySource() {
  std::vector<std::shared_ptr<Watcher>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(watchers_);
  }
  for (auto& w : left) w->stop();
}

std::vector<std::shared_ptr<MemorySource::Watcher>> MemorySource::open_watchers_locked() {
  watchers_.erase(std::remove_if(watchers_.begin(), watchers_.end(), [](const auto& w) { return w->done.load(); }),
                  watchers_.end());
  return watchers_;
}

void MemorySource::run(std::function<void()> task) const {
  if (options_.executor) {
    options_.executor(std::move(task));
  } else {
    task();
  }
}

void MemorySource::deliver(const std::vector<std::shared_ptr<Watcher>>& to, const std::vector<WatchEvent>& events) {
  for (const auto& w : to) {
    std::vector<WatchEvent> mine;
    for (const auto& e : events) {
      if (e.type != WatchEventType::bookmark || w->options.allow_watch_bookmarks) mine.push_back(e);
    }
    if (mine.empty()) continue;
    run([w, mine = std::move(mine)]() mutable { w->post(Watcher::Item{std::move(mine), std::nullopt}); });
  }
}

void MemorySource::close(const std::vector<std::shared_ptr<Watcher>>& to, const Result<void>& reason) {
  for (const auto& w : to) run([w, reason] { w->post(Watcher::Item{{}, reason}); });
}

ObjectPtr MemorySource::change_locked(WatchEventType type, const ObjectPtr& object, std::string_view key,
                                      bool visible) {
  auto found = objects_.find(key);
  ObjectPtr previous = found == objects_.end() ? nullptr : found->second;
  if (type == WatchEventType::deleted && !previous) return nullptr;
  ++rv_;
  ObjectPtr stored = stamp(type == WatchEventType::deleted ? previous : object, rv_);
  if (type == WatchEventType::deleted) {
    objects_.erase(found);
  } else {
    objects_.insert_or_assign(std::string(key), stored);
  }
  history_.push_back(Change{type, stored, std::move(previous), rv_, visible});
  while (history_.size() > options_.history_limit) {
    history_floor_ = history_.front().rv;
    history_.pop_front();
  }
  return stored;
}

ObjectPtr MemorySource::change(WatchEventType type, const ObjectPtr& object, std::string_view key, bool visible) {
  std::lock_guard dispatch(*dispatch_mu_);
  ObjectPtr stored;
  std::vector<std::shared_ptr<Watcher>> to;
  {
    std::lock_guard lock(mu_);
    stored = change_locked(type, object, key, visible);
    if (stored && visible) to = open_watchers_locked();
  }
  if (!to.empty()) deliver(to, {event_of(type, stored)});
  return stored;
}

namespace {
constexpr bool notify = true;
constexpr bool drop_watch = false;
}  // namespace

ObjectPtr MemorySource::add(const ObjectPtr& object) {
  return change(WatchEventType::added, object, object->key(), notify);
}
ObjectPtr MemorySource::modify(const ObjectPtr& object) {
  return change(WatchEventType::modified, object, object->key(), notify);
}
ObjectPtr MemorySource::remove(std::string_view key) { return change(WatchEventType::deleted, nullptr, key, notify); }
ObjectPtr MemorySource::add_drop_watch(const ObjectPtr& object) {
  return change(WatchEventType::added, object, object->key(), drop_watch);
}
ObjectPtr MemorySource::modify_drop_watch(const ObjectPtr& object) {
  return change(WatchEventType::modified, object, object->key(), drop_watch);
}
ObjectPtr MemorySource::remove_drop_watch(std::string_view key) {
  return change(WatchEventType::deleted, nullptr, key, drop_watch);
}

Result<ObjectPtr> MemorySource::add_json(std::string_view json) {
  auto parsed = Object::parse(json);
  if (!parsed) return parsed;
  return add(parsed.value());
}

void MemorySource::bookmark() {
  std::lock_guard dispatch(*dispatch_mu_);
  std::vector<std::shared_ptr<Watcher>> to;
  std::string rv;
  {
    std::lock_guard lock(mu_);
    to = open_watchers_locked();
    rv = std::to_string(rv_);
  }
  deliver(to, {WatchEvent{WatchEventType::bookmark, nullptr, rv, std::nullopt}});
}

void MemorySource::reset_watch() {
  std::lock_guard dispatch(*dispatch_mu_);
  std::vector<std::shared_ptr<Watcher>> to;
  {
    std::lock_guard lock(mu_);
    to.swap(watchers_);
    history_.clear();
    history_floor_ = rv_;
  }
  close(to, {});
}

// -- faults --

void MemorySource::fail_next_list(Error error) {
  std::lock_guard lock(mu_);
  list_faults_.push_back(ListFault{FaultTarget::any_list, std::move(error)});
}

void MemorySource::fail_next_continue(Error error) {
  std::lock_guard lock(mu_);
  list_faults_.push_back(ListFault{FaultTarget::continue_page, std::move(error)});
}

void MemorySource::fail_next_watch(Error error) {
  std::lock_guard lock(mu_);
  watch_faults_.push_back(std::move(error));
}

void MemorySource::close_watches(Result<void> reason) {
  std::lock_guard dispatch(*dispatch_mu_);
  std::vector<std::shared_ptr<Watcher>> to;
  {
    std::lock_guard lock(mu_);
    to.swap(watchers_);
  }
  close(to, reason);
}

void MemorySource::emit(std::vector<WatchEvent> events) {
  std::lock_guard dispatch(*dispatch_mu_);
  std::vector<std::shared_ptr<Watcher>> to;
  {
    std::lock_guard lock(mu_);
    to = open_watchers_locked();
  }
  deliver(to, events);
}

void MemorySource::emit_malformed() {
  emit({WatchEvent{WatchEventType::error, nullptr, "", Error{Errc::decode_failed, "malformed watch event at byte 0"}}});
}

// -- observers --

std::vector<ListOptions> MemorySource::list_requests() const {
  std::lock_guard lock(mu_);
  return list_requests_;
}

std::vector<WatchOptions> MemorySource::watch_requests() const {
  std::lock_guard lock(mu_);
  return watch_requests_;
}

std::size_t MemorySource::open_watch_count() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& w : watchers_) n += w->done ? 0 : 1;
  return n;
}

std::string MemorySource::resource_version() const {
  std::lock_guard lock(mu_);
  return std::to_string(rv_);
}

std::vector<ObjectPtr> MemorySource::objects() const {
  std::lock_guard lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

ObjectPtr MemorySource::get(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto found = objects_.find(key);
  return found == objects_.end() ? nullptr : found->second;
}

// -- ListWatch --

Result<MemorySource::State> MemorySource::state_at_locked(std::uint64_t rv) const {
  if (rv > rv_) {
    return Error{Errc::too_large_rv,
                 "Too large resource version: " + std::to_string(rv) + ", current: " + std::to_string(rv_)};
  }
  if (rv < history_floor_) {
    return Error{Errc::gone, "too old resource version: " + std::to_string(rv) + " (" +
                                 std::to_string(history_floor_) + ")"};
  }
  State state = objects_;
  for (auto it = history_.rbegin(); it != history_.rend() && it->rv > rv; ++it) {
    const std::string key(it->object->key());
    if (it->previous) {
      state.insert_or_assign(key, it->previous);
    } else {
      state.erase(key);
    }
  }
  return state;
}

Result<ObjectList> MemorySource::answer_list_locked(const ListOptions& options) {
  list_requests_.push_back(options);
  const bool is_continue = !options.continue_token.empty();
  for (auto it = list_faults_.begin(); it != list_faults_.end(); ++it) {
    if (it->target == FaultTarget::any_list || is_continue) {
      Error error = std::move(it->error);
      list_faults_.erase(it);
      return error;
    }
  }

  std::uint64_t snapshot_rv = rv_;
  std::string after_key;  // the page starts after this key
  Result<State> state = objects_;
  if (is_continue) {
    if (!options.resource_version.empty()) {
      return Error{Errc::server_error, "specifying resource version is not allowed when using continue"};
    }
    const auto colon = options.continue_token.find(':');
    const auto rv = parse_rv(std::string_view(options.continue_token).substr(0, colon));
    if (colon == std::string::npos || !rv) return Error{Errc::server_error, "invalid continue token"};
    snapshot_rv = *rv;
    after_key = options.continue_token.substr(colon + 1);
    state = state_at_locked(snapshot_rv);
    if (!state && state.error().code == Errc::gone) {
      return Error{Errc::gone, "The provided continue parameter is too old to display a consistent list result."};
    }
  } else if (!options.resource_version.empty() && options.resource_version != "0") {
    const auto rv = parse_rv(options.resource_version);
    if (!rv) return Error{Errc::server_error, "invalid resourceVersion " + options.resource_version};
    const bool exact = options.resource_version_match == "Exact" ||
                       (options.limit > 0 && options.resource_version_match != "NotOlderThan");
    if (*rv > rv_) return state_at_locked(*rv).error();
    if (exact) {
      snapshot_rv = *rv;
      state = state_at_locked(snapshot_rv);
    }
  }
  if (!state) return std::move(state).error();

  ObjectList out;
  out.resource_version = std::to_string(snapshot_rv);
  auto it = is_continue ? state->upper_bound(after_key) : state->begin();
  for (; it != state->end(); ++it) {
    if (options.limit > 0 && static_cast<std::int64_t>(out.items.size()) == options.limit) {
      out.continue_token = std::to_string(snapshot_rv) + ":" + std::string(out.items.back()->key());
      break;
    }
    out.items.push_back(it->second);
  }
  return out;
}

void MemorySource::list(const ListOptions& options, ListCallback done) {
  auto answer = std::make_shared<Result<ObjectList>>([&] {
    std::lock_guard lock(mu_);
    return answer_list_locked(options);
  }());
  run([done = std::move(done), answer] { done(std::move(*answer)); });
}

std::unique_ptr<Watch> MemorySource::watch(const WatchOptions& options, EventsCallback on_events,
                                           ClosedCallback on_closed) {
  auto watcher = std::make_shared<Watcher>(options, std::move(on_events), std::move(on_closed), dispatch_mu_);
  std::lock_guard dispatch(*dispatch_mu_);
  std::optional<Error> failure;
  std::vector<WatchEvent> initial;
  std::vector<WatchEvent> end_of_initial;  // the watch-list bookmark, delivered on its own
  {
    std::lock_guard lock(mu_);
    watch_requests_.push_back(options);
    const auto rv = parse_rv(options.resource_version);
    if (!watch_faults_.empty()) {
      failure = std::move(watch_faults_.front());
      watch_faults_.pop_front();
    } else if (options.send_initial_events) {
      failure = start_watch_list_locked(options, initial, end_of_initial);
    } else if (options.resource_version.empty() || options.resource_version == "0") {
      for (const auto& [key, object] : objects_) initial.push_back(event_of(WatchEventType::added, object));
    } else if (!rv) {
      failure = Error{Errc::server_error, "invalid resourceVersion " + options.resource_version};
    } else if (*rv > rv_ || *rv < history_floor_) {
      failure = state_at_locked(*rv).error();
    } else {
      for (const auto& change : history_) {
        if (change.rv > *rv && change.visible) initial.push_back(event_of(change.type, change.object));
      }
    }
    if (!failure) watchers_.push_back(watcher);
  }
  if (failure) {
    close({watcher}, *failure);
  } else {
    if (!initial.empty()) deliver({watcher}, initial);
    if (!end_of_initial.empty()) deliver({watcher}, end_of_initial);
  }
  return std::make_unique<MemoryWatch>(watcher);
}

std::optional<Error> MemorySource::start_watch_list_locked(const WatchOptions& options,
                                                           std::vector<WatchEvent>& initial,
                                                           std::vector<WatchEvent>& end_of_initial) {
  if (!options_.watch_list) {
    return Error{Errc::server_error,
                 "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"};
  }
  if (options.resource_version_match != "NotOlderThan") {
    return Error{Errc::server_error, "sendInitialEvents requires resourceVersionMatch NotOlderThan"};
  }
  if (!options.resource_version.empty()) {
    const auto rv = parse_rv(options.resource_version);
    if (!rv) return Error{Errc::server_error, "invalid resourceVersion " + options.resource_version};
    if (*rv > rv_) return state_at_locked(*rv).error();
  }
  for (const auto& [key, object] : objects_) initial.push_back(event_of(WatchEventType::added, object));
  if (options.allow_watch_bookmarks) {
    WatchEvent end{WatchEventType::bookmark, nullptr, std::to_string(rv_), std::nullopt};
    end.initial_events_end = true;
    end_of_initial.push_back(std::move(end));
  }
  return std::nullopt;
}

}  // namespace kinformer
