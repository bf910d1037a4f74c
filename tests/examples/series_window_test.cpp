// The window builder's arithmetic (examples/forecasting/series_window.hpp) against
// the official ETT pipeline (models/ett_dataset.hpp) on a synthetic hourly table:
// a series' window must be bit-identical to eval-ett's window of the same rows.
#include "examples/forecasting/series_window.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "models/tensor.hpp"

namespace fc = kinformer::forecasting;
namespace models = kinformer::models;

namespace {

// 20 "months" of hourly rows (the official borders need 14400), one column "OT".
models::EttTable synthetic_table() {
  models::EttTable table;
  table.columns = {"OT"};
  const std::int64_t start = 1467331200;  // 2016-07-01 00:00:00
  for (int r = 0; r < 14400; ++r) {
    table.timestamps.push_back(fc::ett_timestamp(start + r * 3600));
    table.values.push_back(17.0 + 9.0 * std::sin(r * 0.2617) + 0.001 * (r % 97));
  }
  return table;
}

fc::WindowShape shape_of(double mean, double std_dev) {
  models::InformerConfig config;
  config.enc_in = config.dec_in = config.c_out = 1;
  models::EttScaler scaler;
  scaler.mean = {mean};
  scaler.std_dev = {std_dev};
  auto shape = fc::window_shape("m", config, scaler);
  REQUIRE(shape);
  return shape.value();
}

}  // namespace

TEST_CASE("a series window is bit-identical to the official pipeline's window of the same rows",
          "[series_window][unit]") {
  const auto table = synthetic_table();
  const auto shape = shape_of(17.1282616982271, 9.176491024944335);
  auto windows = models::make_windows(table, models::EttSplit::test, {0}, {shape.mean}, {shape.std_dev}, 'h',
                                      shape.seq_len, shape.label_len, shape.pred_len);
  const auto [first_row, end_row] = models::split_rows(table, models::EttSplit::test, shape.seq_len);
  REQUIRE(end_row == 14400);
  for (std::int64_t w : {std::int64_t{0}, std::int64_t{1}, windows.count() - 1}) {
    models::Tensor x_enc, x_mark_enc, x_dec, x_mark_dec, truth;
    windows.batch(w, 1, x_enc, x_mark_enc, x_dec, x_mark_dec, truth);
    fc::MetricSeries series;
    series.key = "m/s";
    series.interval_seconds = 3600;
    for (std::int64_t r = first_row + w; r < first_row + w + shape.seq_len; ++r)
      series.points.push_back({fc::parse_time(table.timestamps[static_cast<std::size_t>(r)]).value(),
                               table.values[static_cast<std::size_t>(r)]});
    auto request = fc::build_window(series, shape);
    REQUIRE(request);
    CHECK(request->seq_len == shape.seq_len);
    CHECK(request->dec_len == shape.label_len + shape.pred_len);
    CHECK(request->x_enc == x_enc.data);
    CHECK(request->x_mark_enc == x_mark_enc.data);
    CHECK(request->x_dec == x_dec.data);
    CHECK(request->x_mark_dec == x_mark_dec.data);  // future time features from the interval
  }
}

TEST_CASE("a window needs seq_len evenly spaced points", "[series_window][unit]") {
  const auto shape = shape_of(0, 1);
  fc::MetricSeries series;
  series.key = "m/s";
  series.interval_seconds = 3600;
  for (int i = 0; i < shape.seq_len - 1; ++i) series.points.push_back({1467331200 + i * 3600, 1.0});
  CHECK_FALSE(fc::window_full(series, shape));
  auto short_window = fc::build_window(series, shape);
  REQUIRE_FALSE(short_window);
  CHECK(short_window.error().code == kinformer::Errc::invalid_input);
  series.points.push_back({series.points.back().time + 7200, 1.0});  // a gap of one step
  CHECK(fc::window_full(series, shape));
  auto gap = fc::build_window(series, shape);
  REQUIRE_FALSE(gap);
  CHECK(gap.error().message.find("a gap before") != std::string::npos);
}

TEST_CASE("a forecast comes back in the metric's units one interval apart", "[series_window][unit]") {
  const auto shape = shape_of(10, 2);
  fc::MetricSeries series;
  series.interval_seconds = 900;
  series.points = {{1000, 1.0}};
  kinformer::actors::ForecastReply reply;
  reply.values = {0.5f, -1.0f};
  auto forecast = fc::to_forecast(series, shape, reply);
  CHECK(forecast.model == "m");
  CHECK(forecast.based_on == 1000);
  REQUIRE(forecast.points.size() == 2);
  CHECK(forecast.points[0].time == 1900);
  CHECK(forecast.points[0].value == 11.0);
  CHECK(forecast.points[1].time == 2800);
  CHECK(forecast.points[1].value == 8.0);
}

TEST_CASE("only univariate models make series windows", "[series_window][unit]") {
  models::InformerConfig config;  // enc_in 7 by default
  config.enc_in = 7;
  models::EttScaler scaler;
  scaler.mean = {0};
  scaler.std_dev = {1};
  auto shape = fc::window_shape("m", config, scaler);
  REQUIRE_FALSE(shape);
  CHECK(shape.error().message.find("not univariate") != std::string::npos);
}
