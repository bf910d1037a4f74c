#include "apiserver/storage/etcd/etcd_watches.hpp"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "apiserver/crd.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

EtcdWatches::EtcdWatches(EtcdClient& client, ResourceRegistry& registry, Keys keys, Options options)
    : client_(client), registry_(registry), keys_(std::move(keys)), options_(options) {}

EtcdWatches::~EtcdWatches() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
}

void EtcdWatches::start(std::uint64_t at) {
  reached_ = at;
  follow_served_kinds(at);
  supervisor_ = std::thread([this] { supervise(); });
}

std::uint64_t EtcdWatches::compacted_through(const ResourceType& type) const {
  if (const auto* window = open_window(type)) return window->start();
  std::lock_guard lock(mu_);
  return compacted_;
}

std::uint64_t EtcdWatches::progress(const ResourceType& type) const {
  const auto* window = open_window(type);
  return window ? window->progress() : 0;
}

void EtcdWatches::follow_served_kinds(std::uint64_t at) {
  WatchWindow::Wakes wake;
  {
    std::lock_guard lock(mu_);
    const auto served = registry_.all();
    for (const auto& type : served) {
      auto& watch = watches_[&type];
      if (!watch) {
        watch = std::make_unique<TypeWatch>(type, at, options_.history);
      } else if (!watch->served) {
        watch->window.reopen(at);
        watch->served = true;
      }
    }
    for (auto& [type, watch] : watches_) {
      if (!watch->served ||
          std::any_of(served.begin(), served.end(), [&, t = type](const auto& s) { return &s == t; }))
        continue;
      watch->served = false;  // a retired kind: the supervisor closes its etcd watch
      auto woken = watch->window.close();
      wake.insert(wake.end(), std::make_move_iterator(woken.begin()), std::make_move_iterator(woken.end()));
      keys_.lost(*type);
    }
    poked_ = true;
  }
  changed_.notify_all();
  for (auto& w : wake) w();
}

WatchWindow* EtcdWatches::window_for(const ResourceType& type, std::uint64_t position) const {
  std::lock_guard lock(mu_);
  auto it = watches_.find(&type);
  if (it != watches_.end() && it->second->served) return &it->second->window;
  if (position < compacted_ || registry_.find(type.group, type.version, type.plural) != &type) return nullptr;
  if (it == watches_.end()) {
    it = watches_.emplace(&type, std::make_unique<TypeWatch>(type, position, options_.history)).first;
  } else {
    it->second->window.reopen(position);
    it->second->served = true;
  }
  poked_ = true;
  changed_.notify_all();
  return &it->second->window;
}

const WatchWindow* EtcdWatches::open_window(const ResourceType& type) const {
  std::lock_guard lock(mu_);
  auto it = watches_.find(&type);
  return it != watches_.end() && it->second->served ? &it->second->window : nullptr;
}

bool EtcdWatches::events_after(const ResourceType& type, std::uint64_t after, std::size_t max,
                               std::vector<EventPtr>& out) const {
  const auto* window = window_for(type, after);
  return window && window->events_after(after, max, out);
}

std::uint64_t EtcdWatches::notify_after(const ResourceType& type, std::uint64_t rv, std::function<void()> wake) {
  auto* window = window_for(type, rv);
  if (window) return window->notify_after(rv, std::move(wake));
  wake();  // nothing to wait for: the next read answers 410
  return 0;
}

void EtcdWatches::cancel_wait(const ResourceType& type, std::uint64_t ticket) {
  WatchWindow* window = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = watches_.find(&type);
    if (it == watches_.end()) return;
    window = &it->second->window;
  }
  window->cancel_wait(ticket);
}

void EtcdWatches::restart_at(std::uint64_t revision) {
  WatchWindow::Wakes wake;
  {
    std::lock_guard lock(mu_);
    compacted_ = std::max(compacted_, revision);
    for (auto& [type, watch] : watches_) {
      if (!watch->served) continue;
      auto woken = watch->window.restart_at(revision);
      wake.insert(wake.end(), std::make_move_iterator(woken.begin()), std::make_move_iterator(woken.end()));
      keys_.lost(*type);
    }
  }
  for (auto& w : wake) w();
}

void EtcdWatches::note_compacted(std::uint64_t revision) {
  std::lock_guard lock(mu_);
  compacted_ = std::max(compacted_, revision);
}

void EtcdWatches::on_message(TypeWatch& watch, const json& message) {
  if (message.value("canceled", false)) {
    // etcd ended the watch; with compact_revision, the revisions it would resume at are gone.
    std::lock_guard lock(mu_);
    if (EtcdClient::number(message, "compact_revision") > 0) watch.resync = true;
    watch.ended = true;
    return;
  }
  const ResourceType& type = watch.type;
  auto events = message.find("events");
  const bool has_events = events != message.end() && events->is_array() && !events->empty();
  std::vector<EventPtr> fresh;
  if (has_events) fresh = keys_.decode(type, *events);
  if (is_crd_type(type))
    for (const auto& event : fresh) {  // another replica's CRD: serve or retire its kind, open or close its watch
      (void)follow_crd(registry_, event->type, *event->object);
      follow_served_kinds(event->resource_version);
    }
  // A message without events after the first is a progress notification: the type has
  // nothing more up to its header's (global) revision.
  std::uint64_t progress = 0;
  if (!has_events && message.contains("header") && !message.value("created", false))
    progress = static_cast<std::uint64_t>(EtcdClient::number(message["header"], "revision"));
  auto wake = watch.window.append(std::move(fresh), progress);
  const auto reached = watch.window.progress();
  for (auto seen = reached_.load(); reached > seen && !reached_.compare_exchange_weak(seen, reached);) {
  }
  {
    std::lock_guard lock(mu_);
    watch.open = true;
    watch.down = false;
    watch.failed = false;
  }
  for (auto& w : wake) w();
}

void EtcdWatches::tend(TypeWatch& watch, std::unique_lock<std::mutex>& lock) {
  using clock = std::chrono::steady_clock;
  const auto now = clock::now();
  const auto grace = options_.failure_grace;
  std::unique_ptr<EtcdClient::Watch> ending;
  WatchWindow::Wakes wake;
  // Ended, no longer served, or never answered within the grace: close the stream
  // (a served type's is reopened below).
  if (watch.stream &&
      (!watch.served || watch.ended || (!watch.open && now - watch.stream_since > grace))) {
    ending = std::move(watch.stream);
    if (watch.open) {
      watch.down = true;
      watch.down_since = now;
    }
    watch.open = false;
  }
  if (!watch.served) {
    watch.down = watch.failed = watch.resync = false;
  } else {
    if (!watch.open && !watch.down) {
      watch.down = true;
      watch.down_since = now;
    }
    if (watch.down && !watch.failed && now - watch.down_since > grace) {
      // etcd has been away too long: the type's watchers get 410 and relist rather
      // than wait silently. Any revision a client was handed (a write's answer may
      // beat its watch event) is below the new start, so no watcher stays parked at it.
      const auto handed_out = std::max<std::uint64_t>(reached_.load(), client_.last_revision());
      wake = watch.window.expire_through(handed_out + 1);
      keys_.lost(watch.type);
      watch.failed = true;
    }
  }
  const bool resync = watch.served && watch.resync && !watch.stream;
  lock.unlock();
  if (ending) ending->cancel();
  ending.reset();
  for (auto& w : wake) w();
  if (resync) {
    // The watch cannot resume: start over at etcd's current revision; watchers behind it get 410.
    auto status = client_.call("/v3/maintenance/status", json::object());
    lock.lock();
    if (auto* answer = std::get_if<json>(&status); answer && watch.served) {
      wake = watch.window.restart_at(
          static_cast<std::uint64_t>(EtcdClient::number(answer->at("header"), "revision")));
      keys_.lost(watch.type);
      watch.resync = false;
    }
    lock.unlock();
    for (auto& w : wake) w();
  }
  lock.lock();
  if (stopping_ || !watch.served || watch.stream || watch.resync) return;
  const std::uint64_t from = watch.window.progress() + 1;
  watch.ended = false;
  watch.open = false;
  lock.unlock();
  const std::string range = keys_.range(watch.type);
  auto stream = client_.watch(
      {{"key", EtcdClient::encode(range)},
       {"range_end", EtcdClient::encode(EtcdClient::prefix_end(range))},
       {"start_revision", std::to_string(from)},
       {"prev_kv", true},
       {"progress_notify", true}},
      [this, &watch](const json& message) { on_message(watch, message); },
      [this, &watch](Result<void> result) {
        std::lock_guard l(mu_);
        if (!result && !stopping_ && watch.open)  // once per outage
          log::warn("apiserver", "etcd watch ended",
                    {{"resource", watch.type.plural}, {"error", result.error().message}});
        watch.ended = true;
      });
  lock.lock();
  watch.stream = std::move(stream);
  watch.stream_since = clock::now();
}

void EtcdWatches::supervise() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    // Entries are never erased, and a std::map keeps iterators across inserts.
    for (auto it = watches_.begin(); it != watches_.end() && !stopping_; ++it) tend(*it->second, lock);
    changed_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_ || poked_; });
    poked_ = false;
  }
  std::vector<std::unique_ptr<EtcdClient::Watch>> streams;
  for (auto& [type, watch] : watches_)
    if (watch->stream) streams.push_back(std::move(watch->stream));
  lock.unlock();
  for (auto& stream : streams) stream->cancel();
}

}  // namespace kinformer::apiserver
