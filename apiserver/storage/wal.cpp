#include "apiserver/storage/wal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

#include "apiserver/storage/files.hpp"
#include "apiserver/storage/log_format.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver::storage {

Result<std::unique_ptr<WriteAheadLog>> WriteAheadLog::open(
    std::function<std::string(std::uint64_t)> segment_path, std::uint64_t segment_number, Hooks hooks) {
  std::unique_ptr<WriteAheadLog> log(new WriteAheadLog(std::move(segment_path), segment_number, std::move(hooks)));
  // Without room for the segment the log starts disk-full and creates it once there is.
  if (auto created = log->create_segment(segment_number); !created && !log->disk_full_)
    return std::move(created).error();
  for (unsigned i = 0; i < std::max(1u, log->hooks_.syncs_in_flight); ++i)
    log->committers_.emplace_back([raw = log.get()] { raw->run(); });
  return log;
}

WriteAheadLog::WriteAheadLog(std::function<std::string(std::uint64_t)> segment_path,
                             std::uint64_t segment_number, Hooks hooks)
    : segment_path_(std::move(segment_path)), hooks_(std::move(hooks)), segment_number_(segment_number) {}

WriteAheadLog::~WriteAheadLog() { (void)close(); }

namespace {

bool out_of_space(int error) { return error == ENOSPC || error == EDQUOT; }

constexpr auto disk_full_retry = std::chrono::seconds(1);

}  // namespace

Result<void> WriteAheadLog::create_segment(std::uint64_t number) {
  auto path = segment_path_(number);
  // Built whole under a temporary name and then linked to its own (which must not exist),
  // so a segment never exists shorter than its header says (log_format.hpp): a crash
  // leaves at most the temporary file, which the next creation of that number reuses.
  // The zeros' blocks and the file's size are synced first, so a record's fdatasync needs
  // no metadata; the new name must be durable before any record in it counts as durable.
  auto temp = path + ".new";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create the log segment", temp);
  const auto zeros = hooks_.preallocate_bytes;
  const auto header = segment_header(segment_header_bytes + zeros);
  bool written = write_all(fd, header.data(), header.size(), 0) &&
                 (!zeros || write_all(fd, std::string(zeros, '\0').data(), zeros, segment_header_bytes)) &&
                 ::fdatasync(fd) == 0;
  if (!written || ::link(temp.c_str(), path.c_str()) != 0) {
    const bool full = out_of_space(errno);
    auto error = io_error(written ? "cannot create the log segment" : "cannot preallocate the log segment", path);
    ::close(fd);
    ::unlink(temp.c_str());
    if (full) note_disk_full(true);
    return error;
  }
  ::unlink(temp.c_str());
  if (auto synced = sync_directory(directory_of(path)); !synced) {
    ::close(fd);
    return synced.error();
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  segment_number_ = number;
  write_offset_ = segment_header_bytes;
  zeroed_end_ = segment_header_bytes + zeros;
  segment_bytes_ = 0;
  return extend_zeros(write_offset_);
}

Result<void> WriteAheadLog::extend_zeros(std::uint64_t records_end) {
  const auto chunk = hooks_.preallocate_bytes;
  while (chunk && records_end + hooks_.reserve_bytes > zeroed_end_) {
    if (!write_all(fd_, std::string(chunk, '\0').data(), chunk, zeroed_end_)) {
      if (!out_of_space(errno)) return io_error("cannot preallocate the log segment", segment_path_(segment_number_));
      note_disk_full(true);
      return {};
    }
    zeroed_end_ += chunk;
  }
  note_disk_full(false);
  return {};
}

void WriteAheadLog::note_disk_full(bool full) {
  if (disk_full_.exchange(full) == full) return;
  if (full)
    log::error("apiserver", "the disk is full: writes are refused (507) until the log can grow again; reads and "
                            "watches go on", {{"file", segment_path_(segment_number_)}});
  else
    log::info("apiserver", "the disk has room again: writes are accepted", {{"file", segment_path_(segment_number_)}});
}

void WriteAheadLog::append(std::vector<EventPtr> events) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(events));
  ++appended_;
  wake_committer_.notify_one();
}

std::uint64_t WriteAheadLog::appended() const {
  std::lock_guard lock(mu_);
  return appended_;
}

void WriteAheadLog::when_durable(std::uint64_t seq, std::function<void(bool)> done) {
  std::unique_lock lock(mu_);
  if (failure_ || (closed_ && seq > durable_)) {
    lock.unlock();
    return done(false);
  }
  if (seq <= durable_) {
    lock.unlock();
    return done(true);
  }
  waiters_.emplace(seq, std::move(done));
}

bool WriteAheadLog::wait_durable(std::uint64_t seq) {
  std::promise<bool> result;
  auto future = result.get_future();
  when_durable(seq, [&result](bool ok) { result.set_value(ok); });
  return future.get();
}

Result<std::uint64_t> WriteAheadLog::rotate() {
  std::unique_lock lock(mu_);
  if (failure_) return *failure_;
  if (closed_ || stopping_) return Error{Errc::stopped, "the write-ahead log is closed"};
  auto target = rotations_done_ + 1;
  rotate_after_ = appended_;
  wake_committer_.notify_all();
  rotated_.wait(lock, [&] { return rotations_done_ >= target; });
  if (failure_) return *failure_;
  if (rotate_error_) return *rotate_error_;
  return rotated_number_;
}

WriteAheadLog::Stats WriteAheadLog::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::uint64_t WriteAheadLog::segment_bytes() const { return segment_bytes_.load(); }

std::optional<Error> WriteAheadLog::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

Result<void> WriteAheadLog::write_records(const std::string& bytes) {
  if (bytes.empty()) return {};
  if (fd_ < 0)
    return Error{Errc::server_error, "no log segment to write: there was no room to create " +
                                         segment_path_(segment_number_)};
  // Zeros ahead: the record's own sync then rarely carries a size change, and writes made
  // before the disk filled up find room.
  if (auto extended = extend_zeros(write_offset_ + bytes.size()); !extended) return extended;
  if (!write_all(fd_, bytes.data(), bytes.size(), write_offset_))
    return io_error("cannot write the log segment", segment_path_(segment_number_));
  write_offset_ += bytes.size();
  segment_bytes_ += bytes.size();
  return {};
}

Result<void> WriteAheadLog::open_for_sync(SyncFile& file) {
  if (file.fd >= 0 && file.segment == segment_number_) return {};
  if (file.fd >= 0) ::close(file.fd);
  auto path = segment_path_(segment_number_);
  file.segment = segment_number_;
  file.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (file.fd < 0) return io_error("cannot open the log segment", path);
  return {};
}

Result<void> WriteAheadLog::sync(SyncFile& file, Written& written) {
  auto start = std::chrono::steady_clock::now();
  bool ok = ::fdatasync(file.fd) == 0;
  int saved = errno;
  written.syncs += 1;
  written.sync_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  errno = saved;
  if (!ok) return io_error("cannot sync the log segment", segment_path_(file.segment));
  return {};
}

void WriteAheadLog::run() {
  SyncFile mine;
  while (true) {
    std::unique_lock write_lock(write_mu_);
    std::unique_lock lock(mu_);
    auto work = [&] { return stopping_ || !queue_.empty() || rotate_after_; };
    if (!disk_full_) {
      wake_committer_.wait(lock, work);
    } else if (!wake_committer_.wait_for(lock, disk_full_retry, work)) {
      lock.unlock();  // out of space and idle: try to make room again
      auto retried = fd_ < 0 ? create_segment(segment_number_) : extend_zeros(write_offset_);
      if (!retried && !(fd_ < 0 && disk_full_)) {  // an error other than no space
        lock.lock();
        fail(retried.error());
      }
      continue;
    }
    if (queue_.empty() && !rotate_after_) break;  // stopping with nothing left
    auto batch = std::move(queue_);
    queue_.clear();
    Written written;
    written.last_seq = appended_;
    written.records = batch.size();
    const auto rotate = rotate_after_;
    const bool failed = failure_.has_value();
    lock.unlock();

    // Records up to the rotation point stay in this segment; later ones start the next.
    std::string before, after;
    auto seq = written.last_seq - batch.size();
    Result<void> result;
    for (const auto& events : batch) {
      ++seq;
      if (events.empty()) continue;
      auto payload = encode_events(events);
      if (payload.size() > max_record_bytes) {  // its length would not fit the frame: never write it
        result = Error{Errc::server_error, "a write of " + std::to_string(payload.size()) +
                                               " bytes exceeds the log's record limit"};
        break;
      }
      append_record(rotate && seq > *rotate ? after : before, payload);
      newest_revision_ = std::max(newest_revision_, events.back()->resource_version);
    }
    bool sync_after_write = !failed && result && !before.empty();
    std::optional<Error> rotate_error;
    if (!failed && result) {
      result = write_records(before);
      if (result && fd_ >= 0) result = open_for_sync(mine);
      if (result && rotate && fd_ < 0) {
        rotate_error = Error{Errc::server_error, "no room for a log segment"};
        result = write_records(after);  // fails if there is any: no segment to hold it
      } else if (result && rotate) {
        result = sync(mine, written);  // the old segment is whole before the next one exists
        if (result) {
          auto created = create_segment(segment_number_ + 1);
          // No room for the next segment: the log goes on in this one, uncompacted.
          if (!created && disk_full_) rotate_error = created.error();
          else result = created;
        }
        if (result && !after.empty()) result = write_records(after);
        if (result) result = open_for_sync(mine);
        sync_after_write = !after.empty();  // else the new segment holds only its synced zeros
      }
    }
    written.newest_revision = newest_revision_;
    if (rotate) {
      lock.lock();
      if (!result) fail(result.error());
      rotate_after_.reset();
      rotated_number_ = segment_number_;
      rotate_error_ = rotate_error;
      ++rotations_done_;
      full_reported_ = false;
      rotated_.notify_all();
      lock.unlock();
    }
    write_lock.unlock();

    // Outside write_mu_: the next committer writes the next batch while this one syncs.
    if (result && sync_after_write) result = sync(mine, written);
    finish(written, std::move(result));
  }
  if (mine.fd >= 0) ::close(mine.fd);
}

void WriteAheadLog::fail(const Error& error) {
  if (failure_) return;
  failure_ = error;
  log::error("apiserver", "the write-ahead log failed, no write is acknowledged from now on: " + error.message);
}

void WriteAheadLog::finish(const Written& written, Result<void> result) {
  std::vector<std::function<void(bool)>> done;
  std::unique_lock lock(mu_);
  if (!result) fail(result.error());
  const bool ok = !failure_;
  if (ok) {
    durable_ = std::max(durable_, written.last_seq);
    stats_.records += written.records;
  }
  stats_.syncs += written.syncs;
  stats_.sync_seconds += written.sync_seconds;
  auto end = ok ? waiters_.upper_bound(durable_) : waiters_.end();
  for (auto it = waiters_.begin(); it != end; ++it) done.push_back(std::move(it->second));
  waiters_.erase(waiters_.begin(), end);
  const bool full = ok && hooks_.segment_limit && hooks_.on_segment_full && !full_reported_ &&
                    segment_bytes_ > hooks_.segment_limit;
  if (full) full_reported_ = true;
  lock.unlock();
  if (ok && written.newest_revision && hooks_.on_durable) hooks_.on_durable(written.newest_revision);
  for (auto& d : done) d(ok);
  if (full) hooks_.on_segment_full();
}

Result<void> WriteAheadLog::close() {
  std::unique_lock lock(mu_);
  if (closed_) return failure_ ? Result<void>(*failure_) : Result<void>();
  stopping_ = true;
  wake_committer_.notify_all();
  lock.unlock();
  for (auto& committer : committers_)
    if (committer.joinable()) committer.join();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  lock.lock();
  closed_ = true;
  std::vector<std::function<void(bool)>> left;
  for (auto& [seq, d] : waiters_) left.push_back(std::move(d));
  waiters_.clear();
  auto result = failure_ ? Result<void>(*failure_) : Result<void>();
  lock.unlock();
  for (auto& d : left) d(false);
  return result;
}

}  // namespace kinformer::apiserver::storage
