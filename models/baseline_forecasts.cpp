#include "models/baseline_forecasts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/model_error.hpp"

namespace kinformer::models {
namespace {

// Relative penalties tried on the validation windows (tools/reference/baselines.py PENALTIES).
constexpr double penalties[] = {1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5};

const float* window_start(const EttWindows& w, int64_t s) { return w.scaled.data() + s * w.channels; }

// Solves (A) X = B in place for a symmetric positive definite A [n, n] and B [n, m]
// (Cholesky); A is overwritten by its factor.
void cholesky_solve(std::vector<double>& a, std::vector<double>& b, int n, int m) {
  for (int j = 0; j < n; ++j) {
    double d = a[static_cast<size_t>(j * n + j)];
    for (int k = 0; k < j; ++k) d -= a[static_cast<size_t>(j * n + k)] * a[static_cast<size_t>(j * n + k)];
    if (d <= 0) throw ModelError("ridge baseline: the regularised Gram matrix is not positive definite");
    const double l = std::sqrt(d);
    a[static_cast<size_t>(j * n + j)] = l;
    for (int i = j + 1; i < n; ++i) {
      double s = a[static_cast<size_t>(i * n + j)];
      for (int k = 0; k < j; ++k) s -= a[static_cast<size_t>(i * n + k)] * a[static_cast<size_t>(j * n + k)];
      a[static_cast<size_t>(i * n + j)] = s / l;
    }
  }
  for (int c = 0; c < m; ++c) {
    for (int i = 0; i < n; ++i) {  // L y = b
      double s = b[static_cast<size_t>(i * m + c)];
      for (int k = 0; k < i; ++k) s -= a[static_cast<size_t>(i * n + k)] * b[static_cast<size_t>(k * m + c)];
      b[static_cast<size_t>(i * m + c)] = s / a[static_cast<size_t>(i * n + i)];
    }
    for (int i = n - 1; i >= 0; --i) {  // Lᵀ x = y
      double s = b[static_cast<size_t>(i * m + c)];
      for (int k = i + 1; k < n; ++k) s -= a[static_cast<size_t>(k * n + i)] * b[static_cast<size_t>(k * m + c)];
      b[static_cast<size_t>(i * m + c)] = s / a[static_cast<size_t>(i * n + i)];
    }
  }
}

void check_same_shape(const EttWindows& a, const EttWindows& b) {
  if (a.seq_len != b.seq_len || a.pred_len != b.pred_len || a.channels != b.channels)
    throw ModelError("baselines: the splits' windows differ in seq_len, pred_len or channels");
}

void accumulate(const float* forecast, const float* truth, int64_t n, ForecastErrors& sum) {
  for (int64_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(forecast[i]) - truth[i];
    sum.mse += e * e;
    sum.mae += std::fabs(e);
  }
}

}  // namespace

RidgeBaseline RidgeBaseline::fit(const EttWindows& train, const EttWindows& val) {
  check_same_shape(train, val);
  const int l = train.seq_len, h = train.pred_len;
  const int64_t c = train.channels;
  std::vector<double> gram(static_cast<size_t>(l) * l, 0.0), cross(static_cast<size_t>(l) * h, 0.0);
  std::vector<double> x(static_cast<size_t>(l)), y(static_cast<size_t>(h));
  for (int64_t s = 0; s < train.count(); ++s)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* rows = window_start(train, s);
      const double last = rows[(l - 1) * c + ch];
      for (int t = 0; t < l; ++t) x[static_cast<size_t>(t)] = rows[t * c + ch] - last;
      for (int t = 0; t < h; ++t) y[static_cast<size_t>(t)] = rows[(l + t) * c + ch] - last;
      for (int i = 0; i < l; ++i) {
        const double xi = x[static_cast<size_t>(i)];
        if (xi == 0) continue;  // the last feature is always 0
        double* g = gram.data() + static_cast<size_t>(i) * l;
        for (int j = i; j < l; ++j) g[j] += xi * x[static_cast<size_t>(j)];
        double* r = cross.data() + static_cast<size_t>(i) * h;
        for (int j = 0; j < h; ++j) r[j] += xi * y[static_cast<size_t>(j)];
      }
    }
  double trace = 0;
  for (int i = 0; i < l; ++i) {
    trace += gram[static_cast<size_t>(i * l + i)];
    for (int j = 0; j < i; ++j) gram[static_cast<size_t>(i * l + j)] = gram[static_cast<size_t>(j * l + i)];
  }
  const double scale = trace / l;
  RidgeBaseline best;
  best.val_mse_ = std::numeric_limits<double>::infinity();
  std::vector<float> forecast(static_cast<size_t>(h * c));
  for (double penalty : penalties) {
    RidgeBaseline candidate;
    candidate.seq_len_ = l;
    candidate.pred_len_ = h;
    candidate.penalty_ = penalty;
    std::vector<double> a = gram;
    for (int i = 0; i < l; ++i) a[static_cast<size_t>(i * l + i)] += penalty * scale;
    candidate.w_ = cross;
    cholesky_solve(a, candidate.w_, l, h);
    double squared = 0;
    for (int64_t s = 0; s < val.count(); ++s) {
      const float* rows = window_start(val, s);
      candidate.predict(rows, static_cast<int>(c), forecast.data());
      for (int64_t i = 0; i < h * c; ++i) {
        const double e = static_cast<double>(forecast[static_cast<size_t>(i)]) - rows[l * c + i];
        squared += e * e;
      }
    }
    candidate.val_mse_ = squared / static_cast<double>(val.count() * h * c);
    if (candidate.val_mse_ < best.val_mse_) best = std::move(candidate);
  }
  return best;
}

void RidgeBaseline::predict(const float* enc, int channels, float* out) const {
  for (int ch = 0; ch < channels; ++ch) {
    const double last = enc[(seq_len_ - 1) * channels + ch];
    for (int t = 0; t < pred_len_; ++t) {
      double v = 0;
      for (int i = 0; i < seq_len_; ++i)
        v += (enc[i * channels + ch] - last) * w_[static_cast<size_t>(i * pred_len_ + t)];
      out[t * channels + ch] = static_cast<float>(v + last);
    }
  }
}

BaselineReport evaluate_baselines(const EttWindows& train, const EttWindows& val, const EttWindows& test,
                                  int64_t count, int period) {
  check_same_shape(train, test);
  const auto ridge = RidgeBaseline::fit(train, val);
  const int l = test.seq_len, h = test.pred_len, c = static_cast<int>(test.channels);
  BaselineReport report;
  report.ridge_penalty = ridge.penalty();
  std::vector<float> forecast(static_cast<size_t>(h * c));
  for (int64_t s = 0; s < count; ++s) {
    const float* rows = window_start(test, s);
    const float* truth = rows + l * c;
    for (size_t k = 0; k < naive_kinds.size(); ++k) {
      naive_forecast(naive_kinds[k], rows, l, c, h, period, forecast.data());
      accumulate(forecast.data(), truth, h * c, report.naive[k]);
    }
    ridge.predict(rows, c, forecast.data());
    accumulate(forecast.data(), truth, h * c, report.ridge);
  }
  const auto n = static_cast<double>(count * h * c);
  for (auto* e : {&report.naive[0], &report.naive[1], &report.naive[2], &report.ridge}) {
    e->mse /= n;
    e->mae /= n;
  }
  for (size_t k = 1; k < naive_kinds.size(); ++k)
    if (report.naive[k].mse < report.best_mse()) report.best = naive_kinds[k];
  return report;
}

}  // namespace kinformer::models
