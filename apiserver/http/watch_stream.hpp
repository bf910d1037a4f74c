// apiserver/http/watch_stream.hpp
//
// WatchStream: what one HTTP watch sends, as chunked-encoding bytes, without the socket
// (kube-api-protocol.md §A5): the response header, the initial state's synthetic ADDEDs,
// the initial-events-end bookmark, then the store's events this watcher's filter lets
// through, bookmarks and the final chunk. The session (http/session.cpp) writes its
// batches; this class decides what they hold, so the rules are testable without Asio.
//
// Contract
//   * next_batch() returns the next write: whatever is queued (header, bookmark, ERROR,
//     final chunk), then at most ~1 MiB of the initial objects or of at most 512 store
//     events, each batch's lines as one chunk. The pieces point into the stored objects,
//     the store's shared event lines, the encoder's static text or this object, and stay
//     valid until the next call to next_batch(): a watcher holds one batch, never a copy
//     of the list or the history.
//   * A watcher behind the store's kept history gets ERROR 410 and the final chunk in
//     that batch (Batch::fell_behind), and nothing after.
//   * position() is the revision of the last store event taken; bookmarks carry it.
//   * A Table watch (WatchPlan::rewrite_line) rewrites every live line it sends.
// Threading: one owner (the session's strand). Errors: none; never throws (beyond
//   std::bad_alloc and what rewrite_line throws).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api.hpp"
#include "apiserver/storage/storage.hpp"

namespace kinformer::apiserver {

class WatchStream {
 public:
  static constexpr std::size_t max_events_per_batch = 512;
  static constexpr std::size_t max_batch_bytes = 1 << 20;

  /// Queues the response header; a plan with a final_error queues only that ERROR and ends.
  WatchStream(Storage& store, WatchPlan plan);

  struct Batch {
    std::vector<std::string_view> pieces;  // empty: nothing to write now
    std::size_t events = 0;                // lines of the initial state and store events in it
    bool fell_behind = false;              // this batch is the 410 that ends the watch
  };
  Batch next_batch();

  /// Queues a BOOKMARK at position().
  void queue_bookmark();
  /// Moves position() to the storage's progress when no event of the type is pending
  /// (etcd's progress notifications), so a bookmark resumes from there.
  void advance_to_progress();
  /// Queues the final chunk: the stream ends after it.
  void finish();

  bool ending() const { return ending_; }
  std::uint64_t position() const { return position_; }
  const WatchPlan& plan() const { return plan_; }
  const ResourceType& type() const { return plan_.filter.type(); }

 private:
  void queue_chunk(std::string chunk);
  void collect_initial(Batch& batch);
  void collect_events(Batch& batch);

  Storage& store_;
  WatchPlan plan_;
  bool ending_ = false;                    // the final chunk is queued
  std::size_t initial_next_ = 0;           // the next of plan_.initial_objects to send
  std::uint64_t position_ = 0;             // RV of the last store event taken from the history
  std::vector<std::string> pending_;       // chunks queued for the next batch
  std::deque<std::string> batch_strings_;  // owned bytes of the batch in flight (deque: stable)
  std::deque<std::string> batch_scratch_;  // lines rendered for this watcher only
  std::vector<EventPtr> batch_events_;     // keep the shared lines of the batch in flight alive
};

/// "1a2b\r\n": the chunk-size line of a chunk of `size` bytes.
std::string chunk_header(std::size_t size);

}  // namespace kinformer::apiserver
