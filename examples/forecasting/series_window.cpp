#include "examples/forecasting/series_window.hpp"

#include <algorithm>

#include "examples/forecasting/forecast_score.hpp"

namespace kinformer::forecasting {

Result<WindowShape> window_shape(std::string model, const models::InformerConfig& config,
                                 const models::EttScaler& scaler) {
  if (config.enc_in != 1 || config.dec_in != 1 || config.c_out != 1)
    return Error{Errc::invalid_input, "model '" + model + "' is not univariate (enc_in " +
                                          std::to_string(config.enc_in) + ", c_out " +
                                          std::to_string(config.c_out) + "): a MetricSeries is one metric"};
  if (scaler.mean.size() != 1 || scaler.std_dev.size() != 1 || !(scaler.std_dev[0] > 0))
    return Error{Errc::invalid_input,
                 "model '" + model + "': the scaler needs one mean and one positive std"};
  if (config.freq != 'h' && config.freq != 't')
    return Error{Errc::invalid_input, "model '" + model + "': time features freq '" +
                                          std::string(1, config.freq) + "' is not supported (h or t)"};
  WindowShape shape;
  shape.model = std::move(model);
  shape.seq_len = config.seq_len;
  shape.label_len = config.label_len;
  shape.pred_len = config.pred_len;
  shape.freq = config.freq;
  shape.mean = scaler.mean[0];
  shape.std_dev = scaler.std_dev[0];
  return shape;
}

std::string ett_timestamp(std::int64_t unix_seconds) {
  std::string text = format_time(unix_seconds);  // "YYYY-MM-DDTHH:MM:SSZ"
  text[10] = ' ';
  text.pop_back();
  return text;
}

Result<actors::ForecastRequest> build_window(const MetricSeries& series, const WindowShape& shape) {
  const auto seq_len = static_cast<std::size_t>(shape.seq_len);
  if (series.points.size() < seq_len)
    return Error{Errc::invalid_input, series.key + " holds " + std::to_string(series.points.size()) +
                                          " points, a window needs " + std::to_string(seq_len)};
  if (series.interval_seconds <= 0)
    return Error{Errc::invalid_input, series.key + ": spec.intervalSeconds is not set"};
  const auto first = series.points.end() - static_cast<std::ptrdiff_t>(seq_len);
  for (auto p = first + 1; p != series.points.end(); ++p)
    if (p->time - (p - 1)->time != series.interval_seconds)
      return Error{Errc::invalid_input, series.key + ": a gap before " + format_time(p->time) +
                                            " (points must be " + std::to_string(series.interval_seconds) +
                                            " s apart)"};
  actors::ForecastRequest request;
  request.model = shape.model;
  request.seq_len = shape.seq_len;
  request.dec_len = shape.label_len + shape.pred_len;
  request.x_enc.reserve(seq_len);
  for (auto p = first; p != series.points.end(); ++p) {
    request.x_enc.push_back(shape.scale(p->value));
    const auto marks = models::time_features(ett_timestamp(p->time), shape.freq);
    request.x_mark_enc.insert(request.x_mark_enc.end(), marks.begin(), marks.end());
  }
  // Decoder: the last label_len known steps, then pred_len unknown ones (zeros) at the future times.
  const auto features = request.x_mark_enc.size() / seq_len;
  const auto label = static_cast<std::size_t>(shape.label_len);
  request.x_dec.assign(request.x_enc.end() - static_cast<std::ptrdiff_t>(label), request.x_enc.end());
  request.x_dec.resize(label + static_cast<std::size_t>(shape.pred_len), 0.f);
  request.x_mark_dec.assign(request.x_mark_enc.end() - static_cast<std::ptrdiff_t>(label * features),
                            request.x_mark_enc.end());
  const std::int64_t last = series.points.back().time;
  for (int step = 1; step <= shape.pred_len; ++step) {
    const auto marks =
        models::time_features(ett_timestamp(last + step * series.interval_seconds), shape.freq);
    request.x_mark_dec.insert(request.x_mark_dec.end(), marks.begin(), marks.end());
  }
  return request;
}

SeriesForecast to_forecast(const MetricSeries& series, const WindowShape& shape,
                           const actors::ForecastReply& reply) {
  SeriesForecast forecast;
  forecast.model = shape.model;
  forecast.based_on = series.points.empty() ? 0 : series.points.back().time;
  for (std::size_t i = 0; i < reply.values.size(); ++i)
    forecast.points.push_back({forecast.based_on + static_cast<std::int64_t>(i + 1) * series.interval_seconds,
                               shape.unscale(reply.values[i])});
  // The score of the forecast now in status; while none of its points has arrived, the one
  // it carried stays the last known.
  forecast.last_score = score_forecast(series);
  if (!forecast.last_score && series.forecast) forecast.last_score = series.forecast->last_score;
  return forecast;
}

}  // namespace kinformer::forecasting
