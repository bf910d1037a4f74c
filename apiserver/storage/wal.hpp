// apiserver/storage/wal.hpp
//
// WriteAheadLog: the Store's durable log. Every write's events become one record
// (log_format.hpp) in the current segment file; a committer thread writes and
// fdatasyncs them in batches (group commit: all records appended while one fsync
// runs share the next one).
//
// Contract
//   * append() (the StoreLog hook, called under the store's mutex) only queues: it
//     never touches the disk. appended() is the sequence number of the newest record.
//   * when_durable(seq, done) calls done(true) once every record up to seq is written
//     and fdatasynced (at once, on the caller's thread, when it already is; else on the
//     committer thread), or done(false) once the log failed. After each synced batch
//     the committer calls on_durable(newest revision in it) (the Store's
//     mark_durable) before it calls the waiters.
//   * An I/O error fails the log for good: the error is printed once on stderr, every
//     waiter then and later gets false. Nothing written after a failed fsync is ever
//     reported durable (PostgreSQL's lesson: a failed fsync cannot be retried).
//   * rotate() starts a new segment: the records appended before the call end in the
//     current one, which is synced before the next segment is created and synced; later
//     records go to the new one. It returns the new segment's number once that has
//     happened. One caller at a time. segment_bytes() is the current segment's size.
//   * close() writes and syncs what is queued and joins the committer. Idempotent.
// Threading: every member is thread-safe; callbacks run without the log's mutex held.
// Errors: Result with Errc::server_error naming the file and errno text.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/store.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver::storage {

class WriteAheadLog final : public StoreLog {
 public:
  struct Hooks {
    std::function<void(std::uint64_t revision)> on_durable;  // every event up to revision is durable
    std::function<void()> on_segment_full;                   // segment_bytes() passed segment_limit
    std::uint64_t segment_limit = 0;                         // 0 = never call on_segment_full
  };

  /// Creates the segment file `path` (it must not exist), syncs its directory and
  /// starts the committer. `segment_path(n)` names segment number n for rotate().
  static Result<std::unique_ptr<WriteAheadLog>> open(std::function<std::string(std::uint64_t)> segment_path,
                                                     std::uint64_t segment_number, Hooks hooks);
  ~WriteAheadLog() override;
  WriteAheadLog(const WriteAheadLog&) = delete;
  WriteAheadLog& operator=(const WriteAheadLog&) = delete;

  void append(std::vector<EventPtr> events) override;
  std::uint64_t appended() const;
  void when_durable(std::uint64_t seq, std::function<void(bool)> done);
  /// Blocks until when_durable(seq) would call back; returns its argument.
  bool wait_durable(std::uint64_t seq);
  /// Returns the new segment's number.
  Result<std::uint64_t> rotate();
  std::uint64_t segment_bytes() const;
  /// Records written and fdatasync calls made so far: records per sync is the group-commit batch.
  struct Stats {
    std::uint64_t records = 0;
    std::uint64_t syncs = 0;
  };
  Stats stats() const;
  /// The error that failed the log, if one did.
  std::optional<Error> failure() const;
  Result<void> close();

 private:
  WriteAheadLog(std::function<std::string(std::uint64_t)> segment_path, std::uint64_t segment_number, int fd,
                Hooks hooks);
  void run();
  Result<void> write_and_sync(int fd, const std::string& bytes, const std::string& path);
  Result<int> create_segment(std::uint64_t number);

  const std::function<std::string(std::uint64_t)> segment_path_;
  const Hooks hooks_;

  mutable std::mutex mu_;
  std::condition_variable wake_committer_;
  std::condition_variable rotated_;
  std::deque<std::vector<EventPtr>> queue_;                          // guarded by mu_
  std::uint64_t appended_ = 0;                                       // guarded by mu_
  std::uint64_t durable_ = 0;                                        // guarded by mu_
  std::multimap<std::uint64_t, std::function<void(bool)>> waiters_;  // guarded by mu_
  std::optional<std::uint64_t> rotate_after_;  // guarded by mu_; a pending rotate(): its appended()
  std::uint64_t rotations_done_ = 0;           // guarded by mu_
  std::uint64_t rotated_number_ = 0;           // guarded by mu_; the segment rotate() made
  std::optional<Error> failure_;               // guarded by mu_
  bool stopping_ = false;                      // guarded by mu_
  bool closed_ = false;                        // guarded by mu_
  Stats stats_;                                // guarded by mu_

  // Committer thread only (segment_bytes_ also read by segment_bytes()).
  int fd_ = -1;
  std::uint64_t segment_number_ = 0;
  std::atomic<std::uint64_t> segment_bytes_{0};
  bool full_reported_ = false;
  std::thread committer_;
};

}  // namespace kinformer::apiserver::storage
