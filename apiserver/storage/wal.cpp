#include "apiserver/storage/wal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>

#include "apiserver/storage/files.hpp"
#include "apiserver/storage/log_format.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver::storage {

Result<std::unique_ptr<WriteAheadLog>> WriteAheadLog::open(
    std::function<std::string(std::uint64_t)> segment_path, std::uint64_t segment_number, Hooks hooks) {
  std::unique_ptr<WriteAheadLog> log(
      new WriteAheadLog(std::move(segment_path), segment_number, -1, std::move(hooks)));
  auto fd = log->create_segment(segment_number);
  if (!fd) return std::move(fd).error();
  log->fd_ = fd.value();
  log->committer_ = std::thread([raw = log.get()] { raw->run(); });
  return log;
}

WriteAheadLog::WriteAheadLog(std::function<std::string(std::uint64_t)> segment_path,
                             std::uint64_t segment_number, int fd, Hooks hooks)
    : segment_path_(std::move(segment_path)),
      hooks_(std::move(hooks)),
      fd_(fd),
      segment_number_(segment_number) {}

WriteAheadLog::~WriteAheadLog() { (void)close(); }

Result<int> WriteAheadLog::create_segment(std::uint64_t number) {
  auto path = segment_path_(number);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return Error{Errc::server_error, "cannot create the log segment " + path + ": " + std::strerror(errno)};
  // The new name must be durable before any record in it counts as durable.
  if (auto synced = sync_directory(directory_of(path)); !synced) {
    ::close(fd);
    return synced.error();
  }
  return fd;
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
  wake_committer_.notify_one();
  rotated_.wait(lock, [&] { return rotations_done_ >= target; });
  if (failure_) return *failure_;
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

Result<void> WriteAheadLog::write_and_sync(int fd, const std::string& bytes, const std::string& path) {
  if (!write_all(fd, bytes.data(), bytes.size()) || ::fdatasync(fd) != 0)
    return Error{Errc::server_error, "cannot write the log segment " + path + ": " + std::strerror(errno)};
  segment_bytes_ += bytes.size();
  return {};
}

void WriteAheadLog::run() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_committer_.wait(lock, [&] { return stopping_ || !queue_.empty() || rotate_after_; });
    if (queue_.empty() && !rotate_after_ && stopping_) break;
    auto batch = std::move(queue_);
    queue_.clear();
    const auto last_seq = appended_;
    const auto rotate = rotate_after_;
    bool ok = !failure_;
    lock.unlock();

    // Records up to the rotation point stay in this segment; later ones start the next.
    std::string before, after;
    std::uint64_t newest = 0;
    auto seq = last_seq - batch.size();
    Result<void> written;
    for (const auto& events : batch) {
      ++seq;
      if (events.empty()) continue;
      bool goes_after = rotate && seq > *rotate;
      auto payload = encode_events(events);
      if (payload.size() > max_record_bytes) {  // its length would not fit the frame: never write it
        written = Error{Errc::server_error, "a write of " + std::to_string(payload.size()) +
                                                " bytes exceeds the log's record limit"};
        break;
      }
      append_record(goes_after ? after : before, payload);
      newest = events.back()->resource_version;
    }
    ok = ok && written;
    if (ok && !before.empty()) written = write_and_sync(fd_, before, segment_path_(segment_number_));
    if (ok && written && rotate) {
      auto next = create_segment(segment_number_ + 1);
      if (next) {
        ::close(fd_);
        fd_ = next.value();
        ++segment_number_;
        segment_bytes_ = 0;
        full_reported_ = false;
      } else {
        written = std::move(next).error();
      }
    }
    if (ok && written && !after.empty()) written = write_and_sync(fd_, after, segment_path_(segment_number_));

    std::vector<std::function<void(bool)>> done;
    lock.lock();
    if (!written && !failure_) {
      failure_ = written.error();
      log::error("apiserver", "the write-ahead log failed, no write is acknowledged from now on: " +
                                  written.error().message);
    }
    ok = !failure_;
    if (ok) {
      durable_ = last_seq;
      stats_.records += batch.size();
      stats_.syncs += (before.empty() ? 0 : 1) + (after.empty() ? 0 : 1);
    }
    auto end = ok ? waiters_.upper_bound(durable_) : waiters_.end();
    for (auto it = waiters_.begin(); it != end; ++it) done.push_back(std::move(it->second));
    waiters_.erase(waiters_.begin(), end);
    if (rotate) {
      rotate_after_.reset();
      rotated_number_ = segment_number_;
      ++rotations_done_;
      rotated_.notify_all();
    }
    lock.unlock();
    if (ok && newest && hooks_.on_durable) hooks_.on_durable(newest);
    for (auto& d : done) d(ok);
    if (ok && hooks_.segment_limit && !full_reported_ && segment_bytes_ > hooks_.segment_limit &&
        hooks_.on_segment_full) {
      full_reported_ = true;
      hooks_.on_segment_full();
    }
    lock.lock();
  }
}

Result<void> WriteAheadLog::close() {
  std::unique_lock lock(mu_);
  if (closed_) return failure_ ? Result<void>(*failure_) : Result<void>();
  stopping_ = true;
  wake_committer_.notify_one();
  lock.unlock();
  if (committer_.joinable()) committer_.join();
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
