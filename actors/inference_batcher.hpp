// actors/inference_batcher.hpp
//
// InferenceBatcher: the inference actor's queue (actors/inference.hpp) as a plain
// data structure, so its rules are testable without actors. Windows wait in
// buckets keyed by (model, seq_len, label_len, pred_len): every window of a bucket
// has the same shapes, so a batch taken from one bucket is one model call.
//
// Contract
//   * admit() checks a window before queueing it, and rejects it alone:
//     Errc::unknown_model, Errc::invalid_input (a tensor's size does not match
//     its rows × the model's channels, non-positive or too long lengths, dec_len
//     not above pred_len, a NaN or Inf value: the message names the tensor and
//     the element), Errc::overloaded when max_queue windows already wait.
//   * take_ready(now) hands out a batch from a bucket that holds max_batch
//     windows or whose oldest window is due; among those, the one whose oldest
//     window came first. At most max_batch windows, oldest first. A window is due
//     at arrival + max_delay - close_margin(), anchored to its arrival. Its arrival
//     is when its requester sent it (ForecastRequest::sent_ns) when that stamp is
//     no later than `now` and at most 1 s earlier (a stamp from another host's
//     clock, or a simulated clock, is not), else `now`; the difference is the
//     window's way in (Batch::way_in, of the oldest window).
//   * next_deadline(): when the next bucket is due (nullopt when nothing waits);
//     a full bucket is due at once.
//   * close_margin(): how late a deadline batch's answers leave against its due
//     time + the typical model time of batches of its size, learned from
//     observe_lateness(): the caller's own overhead around the model call (timer
//     wake-up, hand-over to the worker, answers going out, and the answers' way
//     back to the requester, which the actor cannot see: the caller counts the
//     batch's way_in again for it) plus the call's excess over the median of the
//     last 16 calls of that batch size (a first call,
//     which builds its plan, does not set it). The margin is the largest of the
//     last 256 (an estimate at or above their 99th percentile; one outlier holds
//     it for 256 batches), at least zero, at most max_delay / 2; it is max_delay / 2
//     until 256 batches were observed (the largest of fewer is passed too often).
//     Closing that much early makes 99% of answers leave by arrival + max_delay +
//     the typical model time.
//   * Tickets are the caller's; each admitted ticket comes out in exactly one batch.
// Threading: not thread-safe; one owner (the inference actor). Errors: Result.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "actors/inference_messages.hpp"
#include "models/informer_config.hpp"
#include "models/tensor.hpp"
#include "runtime/result.hpp"

namespace kinformer::actors {

/// All optional.
struct BatcherOptions {
  std::size_t max_batch = 32;  // windows per model call; 32 is the official batch size
  std::chrono::microseconds max_delay{std::chrono::milliseconds(5)};  // longest a window waits for company
  std::size_t max_queue =
      1024;  // waiting windows before overload errors (bounds memory: ~8 KB/window at L=96, 7 ch)
};

using Ticket = uint64_t;
using BatchClock = std::chrono::steady_clock;

struct BucketKey {
  std::string model;
  int32_t seq_len = 0, label_len = 0, pred_len = 0;
  bool operator<(const BucketKey& o) const {
    return std::tie(model, seq_len, label_len, pred_len) <
           std::tie(o.model, o.seq_len, o.label_len, o.pred_len);
  }
};

/// One model call: windows stacked along the batch dimension, in ticket order.
struct Batch {
  BucketKey key;
  std::vector<Ticket> tickets;
  std::vector<BatchClock::time_point> arrived;
  bool by_deadline = false;  // closed because it was due, not because it was full
  BatchClock::time_point due;  // when it was due (by_deadline only)
  BatchClock::duration way_in{};  // its oldest window's, from its requester's send to admit()
  models::Tensor x_enc, x_mark_enc, x_dec, x_mark_dec;  // [n, len, channels]
};

class InferenceBatcher {
 public:
  explicit InferenceBatcher(BatcherOptions options = {});

  /// Makes `name` known with the shapes of `config` (replaces an earlier one).
  void add_model(const std::string& name, const models::InformerConfig& config);

  Result<void> admit(Ticket ticket, ForecastRequest request, BatchClock::time_point now);

  std::optional<BatchClock::time_point> next_deadline() const;

  std::optional<Batch> take_ready(BatchClock::time_point now);

  /// One batch of `windows`: its overhead (how far its model call started after
  /// it was due, plus the time from the model's end until its answers went out)
  /// and its model call's time. Only for batches closed by their deadline that
  /// found the worker idle (no queueing in it).
  void observe_lateness(std::size_t windows, BatchClock::duration overhead, BatchClock::duration model_time);
  BatchClock::duration close_margin() const { return margin_; }

  /// Removes every waiting window and returns their tickets (shutdown).
  std::vector<Ticket> drain();

  std::size_t queued() const { return queued_; }
  const BatcherOptions& options() const { return options_; }

  /// Row `row` of a batch's output [n, pred_len, c_out] as one window's reply.
  static ForecastReply slice(const models::Tensor& out, std::size_t row);

 private:
  struct Waiting {
    Ticket ticket;
    ForecastRequest request;
    BatchClock::time_point arrived;  // the requester's send when known (admit())
    BatchClock::duration way_in;     // from arrived to admit()
  };
  struct Shape {
    int32_t enc_in, dec_in, c_out, time_features, pred_len;
  };

  Result<void> check(const Shape& shape, const ForecastRequest& r) const;
  BatchClock::time_point due(const std::deque<Waiting>& waiting) const;
  BatchClock::duration max_margin() const;  // max_delay / 2

  BatcherOptions options_;
  std::map<std::string, Shape> models_;
  std::map<BucketKey, std::deque<Waiting>> buckets_;  // no empty deques
  std::size_t queued_ = 0;                            // sum of the deques' sizes
  std::deque<BatchClock::duration> lateness_;         // the last 256 observed
  // The last 16 model times of each batch size (windows).
  std::map<std::size_t, std::deque<BatchClock::duration>> model_times_;
  BatchClock::duration margin_{};
};

}  // namespace kinformer::actors
