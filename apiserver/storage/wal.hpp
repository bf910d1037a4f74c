// apiserver/storage/wal.hpp
//
// WriteAheadLog: the Store's durable log. Every write's events become one record
// (log_format.hpp) in the current segment file; committer threads write and
// fdatasync them in batches (group commit: every record appended while the
// committers are busy goes out in the next batch).
//
// Contract
//   * append() (the StoreLog hook, called under the store's mutex) only queues: it
//     never touches the disk. appended() is the sequence number of the newest record.
//   * when_durable(seq, done) calls done(true) once every record up to seq is written
//     and fdatasynced (at once, on the caller's thread, when it already is; else on a
//     committer thread), or done(false) once the log failed. After each synced batch
//     its committer calls on_durable(newest revision in it) (the Store's
//     mark_durable, which ignores a revision it has passed) before it calls the waiters.
//   * Up to `syncs_in_flight` fdatasyncs run at once. Batches are written in sequence
//     order, one at a time; each committer then syncs through its own descriptor, so a
//     sync that returns 0 covers every byte written before it began and the kernel
//     reports a writeback error to every committer's next sync. A finished sync makes
//     durable everything up to its batch, whichever sync finishes first.
//   * Segments are preallocated: a new segment is its header (log_format.hpp) and
//     `preallocate_bytes` of zeros (written, not fallocate()d, so its blocks are
//     initialised), synced under a temporary name before it is linked to its own, and
//     the zeros are extended a chunk ahead of the records. A record's fdatasync then flushes data only, with no
//     journal commit of a new size or new blocks. The reader takes a zeroed tail as the
//     end of the log (log_format.hpp). preallocate_bytes 0 appends instead.
//   * Out of space (ENOSPC, EDQUOT; issue 33, finding 9): the log keeps reserve_bytes of
//     zeros ahead of its records, so when they can no longer be extended the records of
//     writes already made still land in them. disk_full() is then true (the server
//     refuses new writes, 507) and a committer retries the extension (or the segment's
//     creation: open() and rotate() do not fail for want of space) every second; once it
//     succeeds disk_full() is false again and writes come back by themselves. A rotation
//     that finds no space returns its error and the log goes on in the current segment.
//   * Any other I/O error, or a record that does not fit the zeros and finds no space,
//     fails the log for good: the error is printed once on stderr, every waiter then and
//     later gets false. Nothing written after a failed fsync is ever reported durable
//     (PostgreSQL's lesson: a failed fsync cannot be retried).
//   * rotate() starts a new segment: the records appended before the call end in the
//     current one, which is synced before the next segment is created and synced; later
//     records go to the new one. It returns the new segment's number once that has
//     happened. One caller at a time. segment_bytes() is the current segment's record
//     bytes (its zeros not counted).
//   * close() writes and syncs what is queued and joins the committers. Idempotent.
// Threading: every member is thread-safe; callbacks run without the log's mutexes held.
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

#include "apiserver/storage/store.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver::storage {

class WriteAheadLog final : public StoreLog {
 public:
  struct Hooks {
    std::function<void(std::uint64_t revision)> on_durable;  // every event up to revision is durable
    std::function<void()> on_segment_full;                   // segment_bytes() passed segment_limit
    std::uint64_t segment_limit = 0;                         // 0 = never call on_segment_full
    unsigned syncs_in_flight = 4;                            // committer threads (at least 1)
    std::uint64_t preallocate_bytes = 1ull << 20;            // zeros ahead of the records; 0 = append
    // Zeros kept ahead of the records (extended preallocate_bytes at a time): the room
    // the writes already applied have when the disk fills up. Above one 3 MiB object.
    std::uint64_t reserve_bytes = 4ull << 20;
  };

  /// Creates the segment file `path` (it must not exist), syncs its directory and
  /// starts the committers. `segment_path(n)` names segment number n for rotate().
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
  /// Records written, fdatasync calls made and the seconds they took, summed over the
  /// committers: records per sync is the group-commit batch.
  struct Stats {
    std::uint64_t records = 0;
    std::uint64_t syncs = 0;
    double sync_seconds = 0;
  };
  Stats stats() const;
  /// The error that failed the log, if one did.
  std::optional<Error> failure() const;
  /// The file system has no room for more zeros ahead of the records (or for the
  /// segment): new writes must be refused until this is false again.
  bool disk_full() const { return disk_full_.load(); }
  Result<void> close();

 private:
  // A committer's own descriptor of the segment it last synced.
  struct SyncFile {
    std::uint64_t segment = 0;
    int fd = -1;
  };
  // What one committer took off the queue, and its syncs.
  struct Written {
    std::uint64_t last_seq = 0;         // every record up to it is durable once this batch's sync returns
    std::uint64_t newest_revision = 0;  // of the events written up to last_seq; 0: none yet
    std::uint64_t records = 0;
    std::uint64_t syncs = 0;
    double sync_seconds = 0;
  };

  WriteAheadLog(std::function<std::string(std::uint64_t)> segment_path, std::uint64_t segment_number,
                Hooks hooks);
  void run();
  // write_mu_ held:
  Result<void> create_segment(std::uint64_t number);
  /// Zeros up to reserve_bytes past `records_end`; running out of space only sets disk_full_.
  Result<void> extend_zeros(std::uint64_t records_end);
  /// disk_full_ = full, logged when it changes.
  void note_disk_full(bool full);
  Result<void> write_records(const std::string& bytes);
  /// Points `file` at the segment being written (opened under write_mu_, so compaction
  /// cannot have removed it; a sync of a since-removed segment is harmless).
  Result<void> open_for_sync(SyncFile& file);
  // No lock held:
  Result<void> sync(SyncFile& file, Written& written);
  /// Marks the batch durable (or fails the log) and calls its waiters.
  void finish(const Written& written, Result<void> result);
  void fail(const Error& error);  // mu_ held

  const std::function<std::string(std::uint64_t)> segment_path_;
  const Hooks hooks_;

  // Orders the writers: held from taking a batch off the queue until its bytes are written.
  std::mutex write_mu_;
  // Guarded by write_mu_: the segment being written.
  int fd_ = -1;
  std::uint64_t segment_number_ = 0;
  std::uint64_t write_offset_ = 0;
  std::uint64_t zeroed_end_ = 0;
  std::uint64_t newest_revision_ = 0;
  std::atomic<std::uint64_t> segment_bytes_{0};  // written under write_mu_, read by segment_bytes()
  std::atomic<bool> disk_full_{false};           // written under write_mu_; fd_ < 0 only while it is true

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
  std::optional<Error> rotate_error_;          // guarded by mu_; why the last rotation made none (no space)
  std::optional<Error> failure_;               // guarded by mu_
  bool stopping_ = false;                      // guarded by mu_
  bool closed_ = false;                        // guarded by mu_
  bool full_reported_ = false;                 // guarded by mu_; on_segment_full called for this segment
  Stats stats_;                                // guarded by mu_

  std::vector<std::thread> committers_;
};

}  // namespace kinformer::apiserver::storage
