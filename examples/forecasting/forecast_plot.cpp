#include "examples/forecasting/forecast_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "examples/forecasting/forecast_score.hpp"

namespace kinformer::forecasting {
namespace {

constexpr double width = 960, height = 520;
constexpr double left = 90, right = 30, top = 96, bottom = 74;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;
const char* const history_colour = "#1f5fa8";
const char* const forecast_colour = "#d9480f";
const char* const naive_colour = "#9aa0a6";
const char* const actual_colour = "#2b8a3e";

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double v, int decimals = 1) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

// A "nice" step (1, 2 or 5 × 10^k) giving at most ~max_ticks ticks over span.
double nice_step(double span, int max_ticks) {
  const double raw = span / max_ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

// Time ticks: whole hours, 3, 6, 12 h, or whole days.
std::int64_t time_step(std::int64_t span) {
  for (std::int64_t hours : {1, 3, 6, 12, 24, 48, 96, 168, 336, 720})
    if (span / (hours * 3600) <= 9) return hours * 3600;
  return 1440 * 3600;
}

std::string tick_time(std::int64_t t) {
  const std::string full = format_time(t);  // YYYY-MM-DDTHH:MM:SSZ
  return full.substr(5, 5) + " " + full.substr(11, 5);
}

struct Scale {
  double t0, t1, v0, v1;
  double x(double t) const { return left + (t - t0) / (t1 - t0) * plot_w; }
  double y(double v) const { return top + plot_h - (v - v0) / (v1 - v0) * plot_h; }
};

std::string polyline(const Scale& s, const std::vector<MetricPoint>& points, const char* colour,
                     const char* dashes = nullptr, double stroke_width = 2.2) {
  std::ostringstream out;
  out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"" << number(stroke_width)
      << "\" stroke-linejoin=\"round\"" << (dashes ? std::string(" stroke-dasharray=\"") + dashes + "\"" : "")
      << " points=\"";
  for (const auto& p : points)
    out << number(s.x(static_cast<double>(p.time)), 1) << "," << number(s.y(p.value), 1) << " ";
  out << "\"/>\n";
  return out.str();
}

}  // namespace

std::string render_svg(const MetricSeries& series, const std::vector<MetricPoint>& actual) {
  const std::vector<MetricPoint> none;
  const auto& history = series.points;
  const auto& forecast = series.forecast ? series.forecast->points : none;
  std::vector<std::int64_t> forecast_times;
  for (const auto& p : forecast) forecast_times.push_back(p.time);
  const auto naive = series.forecast ? naive_last_day(series, series.forecast->based_on, forecast_times) : none;
  const std::string unit = series.unit.empty() ? "" : " (" + series.unit + ")";
  const std::string metric = series.metric.empty() ? "value" : series.metric;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"30\" font-size=\"19\" font-weight=\"bold\">" << escape(series.key)
      << " — " << escape(metric) << "</text>\n";
  std::vector<MetricPoint> all(history);
  all.insert(all.end(), forecast.begin(), forecast.end());
  all.insert(all.end(), naive.begin(), naive.end());
  all.insert(all.end(), actual.begin(), actual.end());
  if (all.empty()) {
    svg << "<text x=\"" << left << "\" y=\"" << top + plot_h / 2
        << "\" font-size=\"16\">no points yet</text>\n</svg>\n";
    return svg.str();
  }
  auto [lo, hi] = std::minmax_element(
      all.begin(), all.end(), [](const MetricPoint& a, const MetricPoint& b) { return a.value < b.value; });
  double v0 = lo->value, v1 = hi->value;
  if (v1 - v0 < 1e-9) v0 -= 1, v1 += 1;
  const double step = nice_step(v1 - v0, 6);
  v0 = std::floor(v0 / step) * step;
  v1 = std::ceil(v1 / step) * step;
  auto [early, late] = std::minmax_element(
      all.begin(), all.end(), [](const MetricPoint& a, const MetricPoint& b) { return a.time < b.time; });
  double t0 = static_cast<double>(early->time), t1 = static_cast<double>(late->time);
  if (t1 <= t0) t1 = t0 + 3600;
  const Scale s{t0, t1, v0, v1};
  const int decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : 2;

  svg << "<text x=\"" << left << "\" y=\"52\" font-size=\"13\" fill=\"#444\">" << history.size()
      << " points, one every "
      << (series.interval_seconds % 3600 == 0 ? std::to_string(series.interval_seconds / 3600) + " h"
                                              : std::to_string(series.interval_seconds) + " s");
  if (series.forecast)
    svg << "; forecast of the next " << forecast.size() << " by " << escape(series.forecast->model) << " from "
        << format_time(series.forecast->based_on);
  else
    svg << "; no forecast yet";
  svg << "</text>\n";
  if (series.forecast && series.forecast->last_score) {  // right-aligned above the plot
    const auto& sc = *series.forecast->last_score;
    svg << "<text x=\"" << left + plot_w << "\" y=\"" << top - 6 << "\" font-size=\"12\" text-anchor=\"end\" fill=\"#444\">"
        << "last checked forecast (from " << format_time(sc.based_on) << ", " << sc.points << " points came): MAE "
        << number(sc.model_mae, 2) << " vs naive " << number(sc.naive_mae, 2) << "</text>\n";
  }

  // The forecast band, gridlines and axes.
  if (!forecast.empty()) {
    const double x_from = s.x(static_cast<double>(series.forecast->based_on));
    svg << "<rect x=\"" << number(x_from) << "\" y=\"" << top << "\" width=\""
        << number(left + plot_w - x_from) << "\" height=\"" << plot_h << "\" fill=\"#fff1e6\"/>\n"
        << "<line x1=\"" << number(x_from) << "\" y1=\"" << top << "\" x2=\"" << number(x_from) << "\" y2=\""
        << top + plot_h << "\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>\n"
        << "<text x=\"" << number(x_from + 6) << "\" y=\"" << top + 16
        << "\" font-size=\"12\" fill=\"#8a3b0a\">forecast →</text>\n";
  }
  for (double v = v0; v <= v1 + step / 2; v += step) {
    const double y = s.y(v);
    svg << "<line x1=\"" << left << "\" y1=\"" << number(y) << "\" x2=\"" << left + plot_w << "\" y2=\""
        << number(y) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 8 << "\" y=\"" << number(y + 4)
        << "\" font-size=\"12\" text-anchor=\"end\">" << number(v, decimals) << "</text>\n";
  }
  const auto first = static_cast<std::int64_t>(t0), last = static_cast<std::int64_t>(t1);
  const std::int64_t tstep = time_step(last - first);
  for (std::int64_t t = (first + tstep - 1) / tstep * tstep; t <= last; t += tstep) {
    const double x = s.x(static_cast<double>(t));
    svg << "<line x1=\"" << number(x) << "\" y1=\"" << top << "\" x2=\"" << number(x) << "\" y2=\""
        << top + plot_h << "\" stroke=\"#eee\"/>\n"
        << "<line x1=\"" << number(x) << "\" y1=\"" << top + plot_h << "\" x2=\"" << number(x) << "\" y2=\""
        << top + plot_h + 5 << "\" stroke=\"#333\"/>\n"
        << "<text x=\"" << number(x) << "\" y=\"" << top + plot_h + 20
        << "\" font-size=\"12\" text-anchor=\"middle\">" << tick_time(t) << "</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
      << "\" fill=\"none\" stroke=\"#333\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 22
      << "\" font-size=\"14\" text-anchor=\"middle\">time (UTC, MM-DD hh:mm)</text>\n"
      << "<text transform=\"translate(24," << top + plot_h / 2 << ") rotate(-90)\" font-size=\"14\" "
      << "text-anchor=\"middle\">" << escape(metric + unit) << "</text>\n";

  // The data: history solid, the naive forecast faint, what came dotted, and the forecast
  // dashed from the last history point on, on top.
  if (!history.empty()) svg << polyline(s, history, history_colour);
  if (!naive.empty()) svg << polyline(s, naive, naive_colour, "3 3", 1.6);
  if (!actual.empty()) svg << polyline(s, actual, actual_colour, "1 3", 2.4);
  if (!forecast.empty()) {
    std::vector<MetricPoint> joined;
    auto from = std::find_if(history.begin(), history.end(),
                             [&](const MetricPoint& p) { return p.time == series.forecast->based_on; });
    if (from != history.end()) joined.push_back(*from);
    joined.insert(joined.end(), forecast.begin(), forecast.end());
    svg << polyline(s, joined, forecast_colour, "7 4");
    for (const auto& p : forecast)
      svg << "<circle cx=\"" << number(s.x(static_cast<double>(p.time))) << "\" cy=\"" << number(s.y(p.value))
          << "\" r=\"2.6\" fill=\"" << forecast_colour << "\"/>\n";
  }

  // Legend: one row under the subtitle, outside the plot so it hides no data.
  const double ly = 74;
  svg << "<line x1=\"" << left << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + 34 << "\" y2=\"" << ly - 4
      << "\" stroke=\"" << history_colour << "\" stroke-width=\"2.2\"/>\n"
      << "<text x=\"" << left + 42 << "\" y=\"" << ly << "\" font-size=\"13\">history (spec.points)</text>\n"
      << "<line x1=\"" << left + 230 << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + 264 << "\" y2=\""
      << ly - 4 << "\" stroke=\"" << forecast_colour << "\" stroke-width=\"2.2\" stroke-dasharray=\"7 4\"/>\n"
      << "<text x=\"" << left + 272 << "\" y=\"" << ly << "\" font-size=\"13\">forecast (status.forecast)</text>\n"
      << "<line x1=\"" << left + 470 << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + 504 << "\" y2=\"" << ly - 4
      << "\" stroke=\"" << naive_colour << "\" stroke-width=\"1.6\" stroke-dasharray=\"3 3\"/>\n"
      << "<text x=\"" << left + 512 << "\" y=\"" << ly << "\" font-size=\"13\">naive (last day repeated)</text>\n";
  if (!actual.empty())
    svg << "<line x1=\"" << left + 690 << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + 724 << "\" y2=\"" << ly - 4
        << "\" stroke=\"" << actual_colour << "\" stroke-width=\"2.4\" stroke-dasharray=\"1 3\"/>\n"
        << "<text x=\"" << left + 732 << "\" y=\"" << ly << "\" font-size=\"13\">actual</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

Result<void> write_svg(const std::string& path, const MetricSeries& series, const std::vector<MetricPoint>& actual) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << render_svg(series, actual);
  out.close();
  if (!out) return Error{Errc::server_error, "could not write " + path};
  return {};
}

}  // namespace kinformer::forecasting
