#include "actors/inference_batcher.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kinformer::actors {

const std::vector<double>& LatencyHistogram::bounds_ms() {
  static const std::vector<double> bounds = {
      0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, std::numeric_limits<double>::infinity()};
  return bounds;
}

void LatencyHistogram::add(double ms) {
  const auto& b = bounds_ms();
  counts[static_cast<std::size_t>(std::lower_bound(b.begin(), b.end(), ms) - b.begin())] += 1;
  ++count;
  sum_ms += ms;
  max_ms = std::max(max_ms, ms);
}

InferenceBatcher::InferenceBatcher(BatcherOptions options) : options_(options) {
  options_.max_batch = std::max<std::size_t>(options_.max_batch, 1);
  margin_ = max_margin();
}

BatchClock::duration InferenceBatcher::max_margin() const {
  return std::chrono::duration_cast<BatchClock::duration>(options_.max_delay) / 2;
}

void InferenceBatcher::add_model(const std::string& name, const models::InformerConfig& c) {
  models_[name] = Shape{c.enc_in, c.dec_in, c.c_out, c.time_features(), c.pred_len};
}

namespace {

Result<void> invalid(std::string message) { return Error{Errc::invalid_input, std::move(message)}; }

Result<void> check_tensor(const char* name, const std::vector<float>& values, int32_t rows, int32_t channels,
                          const char* channel_name) {
  const auto expected = static_cast<std::size_t>(rows) * static_cast<std::size_t>(channels);
  if (values.size() != expected)
    return invalid(std::string(name) + " has " + std::to_string(values.size()) + " values, expected " +
                   std::to_string(rows) + " rows x " + std::to_string(channels) + " " + channel_name + " = " +
                   std::to_string(expected));
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      return invalid(std::string(name) + " has a non-finite value (" + std::to_string(values[i]) + ") at [" +
                     std::to_string(i / static_cast<std::size_t>(channels)) + ", " +
                     std::to_string(i % static_cast<std::size_t>(channels)) + "]");
  return {};
}

}  // namespace

Result<void> InferenceBatcher::check(const Shape& s, const ForecastRequest& r) const {
  constexpr int32_t max_len = 5000;  // the positional table (informer-model.md §1)
  if (r.seq_len < 1 || r.seq_len > max_len)
    return invalid("seq_len " + std::to_string(r.seq_len) + " is outside [1, 5000]");
  if (r.dec_len <= s.pred_len || r.dec_len > max_len)
    return invalid("dec_len " + std::to_string(r.dec_len) + " must be above the model's pred_len " +
                   std::to_string(s.pred_len) + " and at most 5000");
  for (auto done : {check_tensor("x_enc", r.x_enc, r.seq_len, s.enc_in, "enc_in channels"),
                    check_tensor("x_mark_enc", r.x_mark_enc, r.seq_len, s.time_features, "time features"),
                    check_tensor("x_dec", r.x_dec, r.dec_len, s.dec_in, "dec_in channels"),
                    check_tensor("x_mark_dec", r.x_mark_dec, r.dec_len, s.time_features, "time features")})
    if (!done) return done;
  return {};
}

Result<void> InferenceBatcher::admit(Ticket ticket, ForecastRequest request, BatchClock::time_point now) {
  auto model = models_.find(request.model);
  if (model == models_.end()) {
    std::string known;
    for (const auto& [name, shape] : models_) known += (known.empty() ? "" : ", ") + name;
    return Error{Errc::unknown_model, "no model '" + request.model + "' is loaded (loaded: " + known + ")"};
  }
  if (auto ok = check(model->second, request); !ok) return ok;
  if (queued_ >= options_.max_queue)
    return Error{Errc::overloaded,
                 "inference queue is full (" + std::to_string(queued_) + " windows waiting); retry later"};
  BucketKey key{request.model, request.seq_len, request.dec_len - model->second.pred_len,
                model->second.pred_len};
  auto arrived = now;
  if (request.sent_ns != 0) {
    const BatchClock::time_point sent{std::chrono::duration_cast<BatchClock::duration>(
        std::chrono::nanoseconds(request.sent_ns))};
    // Compared, never subtracted: the stamp comes over the wire, and now - INT64_MIN overflows.
    if (sent <= now && sent >= now - std::chrono::seconds(1)) arrived = sent;
  }
  buckets_[std::move(key)].push_back(Waiting{ticket, std::move(request), arrived, now - arrived});
  ++queued_;
  return {};
}

BatchClock::time_point InferenceBatcher::due(const std::deque<Waiting>& waiting) const {
  const auto arrived = waiting.front().arrived;
  return waiting.size() >= options_.max_batch ? arrived : arrived + options_.max_delay - margin_;
}

std::optional<BatchClock::time_point> InferenceBatcher::next_deadline() const {
  std::optional<BatchClock::time_point> next;
  for (const auto& [key, waiting] : buckets_)
    if (!next || due(waiting) < *next) next = due(waiting);
  return next;
}

void InferenceBatcher::observe_lateness(std::size_t windows, BatchClock::duration overhead,
                                        BatchClock::duration model_time) {
  // Its largest estimates the 99.6th percentile (rank 1 of 257 from the top). The second
  // largest of the last 128 estimated the 98.4th, under the 99% the contract promises: the
  // bench's p99 ended 0.01-0.26 ms over max_delay + batch_ms in every quiet run.
  constexpr std::size_t window = 256;
  constexpr std::size_t model_window = 16;  // model calls per batch size for the typical time
  auto& times = model_times_[windows];
  times.push_back(model_time);
  if (times.size() > model_window) times.pop_front();
  std::vector<BatchClock::duration> by_time(times.begin(), times.end());
  std::sort(by_time.begin(), by_time.end());
  lateness_.push_back(overhead + (model_time - by_time[(by_time.size() - 1) / 2]));
  if (lateness_.size() > window) lateness_.pop_front();
  // The largest of n samples is passed by the next one with probability 1/(n+1): each
  // time, an answer is late. Learning from zero, that was about ln(256/6) = 4 of the
  // bench's first 256 requests, and its p99 sat on the goal (+0.11 to -0.24 ms); holding
  // the cap for the first 99 still left 1-4 late answers per 500. So the margin stays at
  // its cap until the window is full, and then misses about 1 in 257.
  const auto high = *std::max_element(lateness_.begin(), lateness_.end());
  margin_ = lateness_.size() < window ? max_margin() : std::clamp(high, BatchClock::duration::zero(), max_margin());
}

std::optional<Batch> InferenceBatcher::take_ready(BatchClock::time_point now) {
  auto chosen = buckets_.end();
  for (auto it = buckets_.begin(); it != buckets_.end(); ++it) {
    const auto& waiting = it->second;
    if (due(waiting) <= now &&
        (chosen == buckets_.end() || waiting.front().arrived < chosen->second.front().arrived))
      chosen = it;
  }
  if (chosen == buckets_.end()) return std::nullopt;
  auto& waiting = chosen->second;
  const auto n = std::min(waiting.size(), options_.max_batch);
  const bool full = waiting.size() >= options_.max_batch;
  const auto due_at = due(waiting);
  const auto& first = waiting.front().request;
  const auto& key = chosen->first;
  const auto ch = [&](const std::vector<float>& v, int32_t rows) {
    return static_cast<int64_t>(v.size()) / rows;
  };
  Batch batch;
  batch.key = key;
  batch.by_deadline = !full;
  batch.due = due_at;
  batch.way_in = waiting.front().way_in;
  const auto b = static_cast<int64_t>(n);
  batch.x_enc.resize({b, key.seq_len, ch(first.x_enc, first.seq_len)});
  batch.x_mark_enc.resize({b, key.seq_len, ch(first.x_mark_enc, first.seq_len)});
  batch.x_dec.resize({b, first.dec_len, ch(first.x_dec, first.dec_len)});
  batch.x_mark_dec.resize({b, first.dec_len, ch(first.x_mark_dec, first.dec_len)});
  auto put = [](models::Tensor& t, std::size_t row, const std::vector<float>& v) {
    std::memcpy(t.ptr() + row * v.size(), v.data(), v.size() * sizeof(float));
  };
  for (std::size_t i = 0; i < n; ++i) {
    const auto& w = waiting.front();
    put(batch.x_enc, i, w.request.x_enc);
    put(batch.x_mark_enc, i, w.request.x_mark_enc);
    put(batch.x_dec, i, w.request.x_dec);
    put(batch.x_mark_dec, i, w.request.x_mark_dec);
    batch.tickets.push_back(w.ticket);
    batch.arrived.push_back(w.arrived);
    waiting.pop_front();
  }
  queued_ -= n;
  if (waiting.empty()) buckets_.erase(chosen);
  return batch;
}

std::vector<Ticket> InferenceBatcher::drain() {
  std::vector<Ticket> tickets;
  for (const auto& [key, waiting] : buckets_)
    for (const auto& w : waiting) tickets.push_back(w.ticket);
  buckets_.clear();
  queued_ = 0;
  return tickets;
}

ForecastReply InferenceBatcher::slice(const models::Tensor& out, std::size_t row) {
  ForecastReply reply;
  reply.pred_len = static_cast<int32_t>(out.dim(1));
  reply.c_out = static_cast<int32_t>(out.dim(2));
  const auto per_row = static_cast<std::size_t>(out.dim(1) * out.dim(2));
  reply.values.assign(out.data.begin() + static_cast<std::ptrdiff_t>(row * per_row),
                      out.data.begin() + static_cast<std::ptrdiff_t>((row + 1) * per_row));
  return reply;
}

}  // namespace kinformer::actors
