// apiserver/storage/persistence.hpp
//
// Persistence: makes a Store durable in one data file (the snapshot) plus its
// write-ahead log segments beside it ("<data-file>.wal-<n>"), as etcd keeps its
// state: recover at start, log every write before it is acknowledged, compact the
// log into a new snapshot when it grows.
//
//   auto p = storage::Persistence::open(store, registry, {"/var/lib/x/state.json"});
//   ... store writes; before answering a request: p->when_durable(p->sync_point(), send)
//   p->close();   // final snapshot
//
// Contract
//   * open(): the data file's directory must exist and be writable (else an error
//     naming it); "<data-file>.lock" is flock()ed so a second server on the same file
//     fails at once. Then recovery: the snapshot is read and validated
//     (snapshot.hpp), the log segments are replayed in order (their records with
//     revisions the snapshot covers are skipped; every other event must follow the
//     previous revision exactly, so a missing segment is an error, never a gap). A torn
//     last record of the last segment is dropped with a line on stderr. Any other bad
//     record fails open() with an error naming the segment and the byte offset; so
//     does a segment that was cut (shorter than its header, or than it was created:
//     log_format.hpp), and a record nesting deeper than max_persisted_depth. With
//     `repair`, the log is truncated there instead (that record and all after it
//     are dropped, reported on stderr; a segment without its header is removed) and
//     recovery continues. Finally the recovered
//     state is written as the new snapshot and the old segments are removed, and a new
//     segment starts.
//   * Start-up needs no more free space than the log it replays (issue 33): when the
//     recovered state cannot be written as the new snapshot (a full disk), the replayed
//     segments stay (a torn tail in the last one is zeroed in place, so it reads as its
//     end) and the log continues after them; the next compaction folds them in. Only a
//     start that had to delete a deleted CRD's objects needs that snapshot. Without room
//     even for a new segment the log starts disk-full (wal.hpp).
//   * Custom kinds come back with their CRDs: the snapshot's CRDs serve their kinds
//     before its other objects are read, and each replayed event of a CRD serves or
//     retires its kind right after it is applied (follow_crd(), apiserver/crd.hpp), so
//     a log holding "CRD created, objects created, CRD deleted, CRD created again with
//     another schema" replays to the state and the served kinds the server had. The
//     objects of a deleted CRD's kind that a crash left undeleted are deleted then
//     (delete_custom_objects(), as the API does after the CRD's deletion).
//     Known limit: with `repair`, recovery replays the intact records a second time on
//     top of the kinds the first pass served; a log that re-creates a CRD with other
//     names, scope or subresources before the corrupt record may then fail to replay.
//   * Replayed events rebuild the store's watch history, so a watcher that resumes
//     from a revision the snapshot was taken at or after gets the events after it;
//     older ones get 410 Expired. Revisions continue from the recovered one; since the
//     Store lets watchers see only durable events and the server answers a request only
//     after sync_point() is durable, no client has seen a revision a crash lost, so
//     revisions never go back.
//   * sync_point()/when_durable(): a request's answer may go once when_durable(the
//     sync_point() taken after it was served) called back true; false means the log
//     failed (answer 500: the write may or may not survive).
//   * When a segment passes compact_bytes, a background thread rotates the log,
//     snapshots the store and removes the older segments (compactions() counts it).
//   * close(): stops compaction, drains the log, writes the final snapshot, removes the
//     segments and detaches from the store. Idempotent; the destructor calls it.
// Threading: sync_point(), when_durable(), wait_durable(), compactions() from any thread;
//   open()/close() from the owner.
// Errors: Result with messages naming the file (and offset, and object).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apiserver/resources.hpp"
#include "apiserver/storage/wal.hpp"
#include "apiserver/storage/store.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver::storage {

struct PersistenceOptions {
  std::string data_file;
  std::uint64_t compact_bytes = 64ull << 20;  // a segment this large is compacted into a snapshot
  bool repair = false;                        // truncate the log at a corrupt record instead of failing
};

class Persistence {
 public:
  static Result<std::unique_ptr<Persistence>> open(Store& store, ResourceRegistry& registry,
                                                   PersistenceOptions options);
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  std::uint64_t sync_point() const { return wal_->appended(); }
  void when_durable(std::uint64_t seq, std::function<void(bool)> done) {
    wal_->when_durable(seq, std::move(done));
  }
  bool wait_durable(std::uint64_t seq) { return wal_->wait_durable(seq); }
  std::uint64_t compactions() const;
  WriteAheadLog::Stats log_stats() const { return wal_->stats(); }
  /// The log has no room to grow (wal.hpp): refuse writes until this is false again.
  bool disk_full() const { return wal_->disk_full(); }
  Result<void> close();

 private:
  struct Corruption {
    std::size_t segment_index;
    std::string path;
    std::size_t offset;
    std::string why;
    std::uint64_t created_bytes;  // from the segment's header (0: none): --repair zero-fills up to it
  };

  Persistence(Store& store, ResourceRegistry& registry, PersistenceOptions options);
  Result<void> recover();
  /// Replays every segment; a bad record is returned as a Corruption (an I/O error as Error).
  /// A torn tail it accepts is left in torn_tail_.
  Result<std::optional<Corruption>> replay_segments(
      const std::vector<std::pair<std::uint64_t, std::string>>& segments, std::size_t& records);
  Result<void> replay_record(std::string_view payload, const std::string& where);
  Result<void> truncate_at(const std::vector<std::pair<std::uint64_t, std::string>>& segments,
                           const Corruption& bad);
  /// Overwrites torn_tail_ with zeros, so the segment reads as ending before it.
  Result<void> zero_torn_tail();
  /// Snapshots the store, then removes the segments numbered below `keep_from`.
  Result<void> checkpoint(std::uint64_t keep_from);
  std::vector<std::pair<std::uint64_t, std::string>> list_segments() const;
  std::string segment_path(std::uint64_t number) const;
  void compact_loop();

  Store& store_;
  ResourceRegistry& registry_;                 // recovery serves the kinds of the CRDs it reads
  std::vector<const ResourceType*> retired_;  // kinds the replay retired, in order: their objects' deletions follow
  const PersistenceOptions options_;
  int lock_fd_ = -1;
  std::unique_ptr<WriteAheadLog> wal_;
  bool closed_ = false;
  struct TornTail {
    std::string path;
    std::size_t from = 0, to = 0;  // the torn record's bytes; zeros follow
  };
  std::optional<TornTail> torn_tail_;  // of the last segment, found by recover()

  mutable std::mutex mu_;
  std::condition_variable compact_wanted_;
  bool compact_requested_ = false;  // guarded by mu_
  bool stopping_ = false;           // guarded by mu_
  std::uint64_t compactions_ = 0;   // guarded by mu_
  std::thread compactor_;
};

}  // namespace kinformer::apiserver::storage
