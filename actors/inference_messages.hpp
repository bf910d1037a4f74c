// actors/inference_messages.hpp
//
// The messages of the inference actor (actors/inference.hpp): one forecast window
// in, its forecast out, and the actor's metrics. They cross processes
// (serve-inference, actors/inference_client.hpp), so each has an inspect()
// overload and register_inference_types() (actors/inference.hpp) names them.
//
// Contract
//   * ForecastRequest holds ONE window, row-major [length, channels] per tensor:
//     x_enc and x_mark_enc have seq_len rows, x_dec and x_mark_dec dec_len rows
//     (label_len + the model's pred_len). Channel counts come from the model.
//   * ForecastReply: values [pred_len, c_out], row-major.
//   * LatencyHistogram counts observations into fixed upper bounds (bounds_ms(),
//     the last one +inf) and keeps count, sum and max.
// Threading: plain values. Errors: none.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

namespace kinformer::actors {

struct ForecastRequest {
  std::string model;
  // When the requester sent it: steady_clock (CLOCK_MONOTONIC, one clock for every process of
  // a host) nanoseconds since its epoch, set by mark_sent() just before sending; 0 = unknown.
  // The window's max_delay then counts from here, so the way to the actor is inside it.
  int64_t sent_ns = 0;
  int32_t seq_len = 0;            // rows of x_enc, x_mark_enc
  int32_t dec_len = 0;            // rows of x_dec, x_mark_dec (label_len + pred_len)
  std::vector<float> x_enc;       // [seq_len, enc_in]
  std::vector<float> x_mark_enc;  // [seq_len, time features]
  std::vector<float> x_dec;       // [dec_len, dec_in]
  std::vector<float> x_mark_dec;  // [dec_len, time features]

  void mark_sent() {
    sent_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count();
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ForecastRequest& x) {
  return f(caf::meta::type_name("ForecastRequest"), x.model, x.sent_ns, x.seq_len, x.dec_len, x.x_enc,
           x.x_mark_enc, x.x_dec, x.x_mark_dec);
}

struct ForecastReply {
  int32_t pred_len = 0;
  int32_t c_out = 0;
  std::vector<float> values;  // [pred_len, c_out]
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ForecastReply& x) {
  return f(caf::meta::type_name("ForecastReply"), x.pred_len, x.c_out, x.values);
}

struct LatencyHistogram {
  std::vector<uint64_t> counts =
      std::vector<uint64_t>(bounds_ms().size(), 0);  // counts[i]: <= bounds_ms()[i]
  uint64_t count = 0;
  double sum_ms = 0;
  double max_ms = 0;

  /// 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, +inf.
  static const std::vector<double>& bounds_ms();
  void add(double ms);
  double mean_ms() const { return count ? sum_ms / static_cast<double>(count) : 0; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LatencyHistogram& x) {
  return f(caf::meta::type_name("LatencyHistogram"), x.counts, x.count, x.sum_ms, x.max_ms);
}

struct InferenceMetrics {
  std::vector<uint64_t> batch_sizes;  // batch_sizes[n]: batches of n windows run (index 0 unused)
  LatencyHistogram queue_delay;       // per window: arrival (its send, if stamped) to the worker
  LatencyHistogram model_time;        // per batch: the backend call
  LatencyHistogram overhead;          // per batch closed by its deadline on an idle worker: model
                                      // start - due + answers out - model end (timer, hand-overs)
  double close_margin_ms = 0;         // batches close this early (InferenceBatcher::close_margin)
  uint64_t requests = 0;              // forecast requests received
  uint64_t answered = 0;              // answered with a forecast
  uint64_t rejected_invalid = 0;      // bad shape or non-finite values
  uint64_t rejected_unknown = 0;      // unknown model
  uint64_t rejected_overload = 0;     // queue full
  uint64_t failed = 0;                // the batch's backend call failed
  uint64_t queued = 0;                // windows waiting now (not yet with the worker)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, InferenceMetrics& x) {
  return f(caf::meta::type_name("InferenceMetrics"), x.batch_sizes, x.queue_delay, x.model_time, x.overhead,
           x.close_margin_ms, x.requests,
           x.answered, x.rejected_invalid, x.rejected_unknown, x.rejected_overload, x.failed, x.queued);
}

}  // namespace kinformer::actors
