// models/naive_forecast.hpp
//
// The forecasts that need no model (issue 28), as one rule shared by the three places that
// use them: the baselines a model is judged against (models/baseline_forecasts.hpp), the
// naive-residual instance norm that makes the Informer forecast a correction to one of
// them (models/instance_norm.hpp), and the forecasting examples' score.
// tools/reference/baselines.py's naive_forecasts() is the numpy twin.
//
// Contract
//   * naive_forecast(): from one window's encoder rows [seq_len, C] the forecast
//     [pred_len, C] of `kind`: last_value repeats the last row; last_day repeats the
//     last `period` rows (fewer when the window is shorter); last_day_mean repeats their
//     mean (accumulated in double).
//   * parse_naive_kind() accepts exactly the names to_string() gives.
// Threading: pure functions.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace kinformer::models {

enum class NaiveKind { last_value, last_day, last_day_mean };
inline constexpr std::array<NaiveKind, 3> naive_kinds = {NaiveKind::last_value, NaiveKind::last_day,
                                                         NaiveKind::last_day_mean};

/// "last_value", "last_day", "last_day_mean".
const char* to_string(NaiveKind kind);
std::optional<NaiveKind> parse_naive_kind(std::string_view name);

/// Rows per day of an ETT frequency: 24 for 'h', 96 for 't'.
int steps_per_day(char freq);

void naive_forecast(NaiveKind kind, const float* enc, int seq_len, int channels, int pred_len, int period,
                    float* out);

}  // namespace kinformer::models
