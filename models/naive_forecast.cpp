#include "models/naive_forecast.hpp"

#include <algorithm>

namespace kinformer::models {

const char* to_string(NaiveKind kind) {
  switch (kind) {
    case NaiveKind::last_value: return "last_value";
    case NaiveKind::last_day: return "last_day";
    case NaiveKind::last_day_mean: return "last_day_mean";
  }
  return "?";
}

std::optional<NaiveKind> parse_naive_kind(std::string_view name) {
  for (auto kind : naive_kinds)
    if (name == to_string(kind)) return kind;
  return std::nullopt;
}

int steps_per_day(char freq) { return freq == 't' ? 96 : 24; }

void naive_forecast(NaiveKind kind, const float* enc, int seq_len, int channels, int pred_len, int period,
                    float* out) {
  const int day = std::min(period, seq_len), first = seq_len - day;
  for (int c = 0; c < channels; ++c) {
    double mean = 0;
    if (kind == NaiveKind::last_day_mean) {
      for (int t = first; t < seq_len; ++t) mean += enc[t * channels + c];
      mean /= day;
    }
    for (int t = 0; t < pred_len; ++t) {
      float v = enc[(seq_len - 1) * channels + c];
      if (kind == NaiveKind::last_day) v = enc[(first + t % day) * channels + c];
      if (kind == NaiveKind::last_day_mean) v = static_cast<float>(mean);
      out[t * channels + c] = v;
    }
  }
}

}  // namespace kinformer::models
