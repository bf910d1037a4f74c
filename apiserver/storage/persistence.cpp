#include "apiserver/storage/persistence.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "apiserver/crd.hpp"
#include "apiserver/storage/files.hpp"
#include "apiserver/storage/log_format.hpp"
#include "apiserver/storage/persisted_object.hpp"
#include "apiserver/storage/snapshot.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver::storage {

using nlohmann::json;

namespace {

constexpr const char* segment_infix = ".wal-";

}  // namespace

Persistence::Persistence(Store& store, ResourceRegistry& registry, PersistenceOptions options)
    : store_(store), registry_(registry), options_(std::move(options)) {}

Result<std::unique_ptr<Persistence>> Persistence::open(Store& store, ResourceRegistry& registry,
                                                       PersistenceOptions options) {
  std::unique_ptr<Persistence> p(new Persistence(store, registry, std::move(options)));
  if (auto recovered = p->recover(); !recovered) return std::move(recovered).error();
  return p;
}

Persistence::~Persistence() { (void)close(); }

std::string Persistence::segment_path(std::uint64_t number) const {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%010llu", static_cast<unsigned long long>(number));
  return options_.data_file + segment_infix + digits;
}

std::vector<std::pair<std::uint64_t, std::string>> Persistence::list_segments() const {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  auto dir = directory_of(options_.data_file);
  auto prefix = base_name_of(options_.data_file) + segment_infix;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (auto* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) continue;
    auto digits = name.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) continue;
    out.emplace_back(std::stoull(digits), dir + "/" + name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Result<void> Persistence::recover() {
  const auto& file = options_.data_file;
  if (auto usable = check_directory(directory_of(file)); !usable) return usable;
  auto lock_path = file + ".lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return io_error("cannot create the lock file", lock_path);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
    return Error{Errc::server_error, "another process is using " + file + " (it holds " + lock_path + ")"};

  Store::Contents snapshot = store_.contents();  // the bootstrap state when there is no data file yet
  bool have_snapshot = ::access(file.c_str(), F_OK) == 0;
  if (have_snapshot) {
    auto read = read_snapshot(file, registry_);
    if (!read) return std::move(read).error();
    snapshot = std::move(read).value();
  }
  auto segments = list_segments();
  std::size_t records = 0;
  while (true) {
    store_.restore(snapshot.revision, snapshot.objects);
    records = 0;
    torn_tail_.reset();
    auto bad = replay_segments(segments, records);
    if (!bad) return std::move(bad).error();
    if (!bad.value()) break;
    const auto& corruption = *bad.value();
    if (!options_.repair)
      return Error{
          Errc::decode_failed,
          corruption.path + ": corrupt log record at byte offset " + std::to_string(corruption.offset) +
              " (" + corruption.why + "); " + std::to_string(records) +
              " records before it are intact. Start with --repair to truncate the log at that offset "
              "(this drops that record and every later write)"};
    log::warn("apiserver", "--repair: truncating " + corruption.path + " at byte offset " +
                               std::to_string(corruption.offset) + " (" + corruption.why +
                               ") and dropping every later segment");
    if (auto truncated = truncate_at(segments, corruption); !truncated) return truncated;
    segments = list_segments();
  }
  // A crash between a CRD's deletion and the end of its objects' deletions left some.
  const auto revision_before_cleanup = store_.revision();
  for (const ResourceType* retired : retired_)
    if (registry_.find(retired->group, retired->version, retired->plural) != retired)
      delete_custom_objects(store_, *retired);
  std::uint64_t next_segment = segments.empty() ? 1 : segments.back().first + 1;
  if (have_snapshot || records)
    log::info("apiserver", "recovered",
              {{"revision", store_.revision()}, {"file", file}, {"snapshot_revision", snapshot.revision},
               {"log_records_replayed", records}});
  // The recovered state becomes the snapshot; the replayed segments (and any torn tail) go.
  // Without room for it, they stay and the log goes on after them: only the deletions of
  // a retired kind's objects exist nowhere but in the store and need it.
  const bool deleted_objects = store_.revision() != revision_before_cleanup;
  if (auto saved = checkpoint(next_segment); !saved) {
    if (deleted_objects) return saved;
    log::warn("apiserver", "cannot write the recovered state as the snapshot; keeping the replayed log",
              {{"error", saved.error().message}});
    if (auto zeroed = zero_torn_tail(); !zeroed) return zeroed;
  }

  WriteAheadLog::Hooks hooks;
  hooks.on_durable = [this](std::uint64_t revision) { store_.mark_durable(revision); };
  hooks.on_segment_full = [this] {
    std::lock_guard lock(mu_);
    compact_requested_ = true;
    compact_wanted_.notify_one();
  };
  hooks.segment_limit = options_.compact_bytes;
  auto wal = WriteAheadLog::open([this](std::uint64_t n) { return segment_path(n); }, next_segment,
                                 std::move(hooks));
  if (!wal) return std::move(wal).error();
  wal_ = std::move(wal).value();
  store_.attach_log(wal_.get());
  compactor_ = std::thread([this] { compact_loop(); });
  return {};
}

Result<std::optional<Persistence::Corruption>> Persistence::replay_segments(
    const std::vector<std::pair<std::uint64_t, std::string>>& segments, std::size_t& records) {
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& path = segments[i].second;
    auto bytes = read_file(path);
    if (!bytes) return std::move(bytes).error();
    std::uint64_t created_bytes = 0;
    auto scan = scan_segment(bytes.value(), &created_bytes);
    for (const auto& record : scan.records) {
      auto replayed =
          replay_record(record.payload, path + " at byte offset " + std::to_string(record.offset));
      if (!replayed)
        return std::optional<Corruption>(
            Corruption{i, path, record.offset, replayed.error().message, created_bytes});
      ++records;
    }
    if (scan.tail == ScanResult::Tail::clean) continue;
    if (scan.tail == ScanResult::Tail::torn && i + 1 == segments.size()) {
      // An append a crash cut short: its write was never acknowledged.
      log::warn("apiserver", "dropping a torn record at the end of the log: " + scan.why,
                {{"file", path}, {"offset", scan.bad_offset}, {"bytes", bytes->size() - scan.bad_offset}});
      auto last = std::string_view(bytes.value()).find_last_not_of('\0');
      torn_tail_ = TornTail{path, scan.bad_offset, last == std::string_view::npos ? scan.bad_offset : last + 1};
      return std::optional<Corruption>();
    }
    return std::optional<Corruption>(Corruption{i, path, scan.bad_offset, scan.why, created_bytes});
  }
  return std::optional<Corruption>();
}

Result<void> Persistence::replay_record(std::string_view payload, const std::string& where) {
  auto fail = [&](const std::string& why) { return Error{Errc::decode_failed, why}; };
  auto parsed = parse_persisted_json(payload, "the record");
  if (!parsed) return std::move(parsed).error();
  const json& record = parsed.value();
  if (!record.is_object()) return fail("the record is not a JSON object");
  auto events = record.find("events");
  if (events == record.end() || !events->is_array() || events->empty())
    return fail("the record has no events");
  std::vector<std::pair<EventType, StoredPtr>> decoded;
  static const json missing;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const auto& e = (*events)[i];
    auto name = where + ": events[" + std::to_string(i) + "]";
    if (!e.is_object()) return fail(name + " is not an object");
    auto type = e.find("type");
    EventType event_type;
    if (type != e.end() && *type == "ADDED")
      event_type = EventType::added;
    else if (type != e.end() && *type == "MODIFIED")
      event_type = EventType::modified;
    else if (type != e.end() && *type == "DELETED")
      event_type = EventType::deleted;
    else
      return fail(name + ": \"type\" must be ADDED, MODIFIED or DELETED");
    auto resource = e.find("resource");
    auto object = e.find("object");
    auto stored = decode_persisted_object(registry_, resource == e.end() ? missing : *resource,
                                          object == e.end() ? missing : *object, max_revision, name, retired_);
    if (!stored) return std::move(stored).error();
    decoded.emplace_back(event_type, std::move(stored).value());
  }
  // One write's events are contiguous revisions; a snapshot covers a write whole or not at all.
  for (std::size_t i = 1; i < decoded.size(); ++i)
    if (decoded[i].second->resource_version != decoded[0].second->resource_version + i)
      return fail("the record's revisions are not contiguous");
  auto revision = store_.revision();
  if (decoded.back().second->resource_version <= revision) return {};  // the snapshot holds it
  if (decoded.front().second->resource_version <= revision)
    return fail("the record straddles the snapshot's revision " + std::to_string(revision));
  for (auto& [type, object] : decoded) {
    if (auto applied = store_.replay(type, object); !applied) return fail(applied.error().message);
    // In log order, so a CRD deleted and created again serves what the log ends with.
    auto followed = follow_crd(registry_, type, *object);
    if (!followed) return fail(followed.error().message);
    if (type == EventType::deleted && followed.value()) retired_.push_back(followed.value());
  }
  return {};
}

Result<void> Persistence::truncate_at(const std::vector<std::pair<std::uint64_t, std::string>>& segments,
                                      const Corruption& bad) {
  const auto& path = bad.path;
  if (bad.offset < segment_header_bytes) {  // not even its header is left: the segment goes
    if (::unlink(path.c_str()) != 0) return io_error("cannot remove", path);
  } else {
    // Cut at the offset, then zeros up to the size it was created with: what is left reads
    // as a whole segment whose records end there.
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bad.offset)) != 0 ||
        (bad.created_bytes > bad.offset && ::ftruncate(fd, static_cast<off_t>(bad.created_bytes)) != 0) ||
        ::fsync(fd) != 0) {
      auto error = io_error("cannot truncate", path);
      if (fd >= 0) ::close(fd);
      return error;
    }
    ::close(fd);
  }
  for (std::size_t i = bad.segment_index + 1; i < segments.size(); ++i)
    if (::unlink(segments[i].second.c_str()) != 0) return io_error("cannot remove", segments[i].second);
  return sync_directory(directory_of(path));
}

Result<void> Persistence::zero_torn_tail() {
  if (!torn_tail_) return {};
  const auto& tail = *torn_tail_;
  // Overwritten in place: allocated blocks need no free space.
  int fd = ::open(tail.path.c_str(), O_WRONLY | O_CLOEXEC);
  const std::string zeros(tail.to - tail.from, '\0');
  if (fd < 0 || !write_all(fd, zeros.data(), zeros.size(), tail.from) || ::fsync(fd) != 0) {
    auto error = io_error("cannot zero the torn tail of", tail.path);
    if (fd >= 0) ::close(fd);
    return error;
  }
  ::close(fd);
  return {};
}

Result<void> Persistence::checkpoint(std::uint64_t keep_from) {
  if (auto saved = write_snapshot(options_.data_file, store_.contents()); !saved) return saved;
  bool removed = false;
  for (const auto& [number, path] : list_segments()) {
    if (number >= keep_from) continue;
    if (::unlink(path.c_str()) != 0) return io_error("cannot remove the compacted log segment", path);
    removed = true;
  }
  return removed ? sync_directory(directory_of(options_.data_file)) : Result<void>();
}

void Persistence::compact_loop() {
  std::unique_lock lock(mu_);
  while (true) {
    compact_wanted_.wait(lock, [&] { return stopping_ || compact_requested_; });
    if (stopping_) return;
    compact_requested_ = false;
    lock.unlock();
    // Rotate first: every record in the older segments is then covered by the snapshot
    // taken after it (records the new segment repeats are skipped at recovery).
    auto next = wal_->rotate();
    Result<void> done = next ? checkpoint(next.value()) : Result<void>(next.error());
    if (!done)
      log::error("apiserver", "log compaction failed (the log keeps every record): " + done.error().message);
    lock.lock();
    if (done) ++compactions_;
  }
}

std::uint64_t Persistence::compactions() const {
  std::lock_guard lock(mu_);
  return compactions_;
}

Result<void> Persistence::close() {
  if (closed_) return {};
  closed_ = true;
  Result<void> result;
  if (compactor_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      compact_wanted_.notify_one();
    }
    compactor_.join();
  }
  if (wal_) {
    store_.attach_log(nullptr);
    result = wal_->close();
    // Only a healthy log's content may become the snapshot (a failed one was never acknowledged).
    if (result) result = checkpoint(std::numeric_limits<std::uint64_t>::max());
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
  return result;
}

}  // namespace kinformer::apiserver::storage
