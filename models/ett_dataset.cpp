#include "models/ett_dataset.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/model_error.hpp"

namespace kinformer::models {
namespace {

struct CivilTime {
  int year, month, day, hour, minute, second;
};

CivilTime parse_time(const std::string& s) {
  CivilTime t{};
  if (std::sscanf(s.c_str(), "%d-%d-%d %d:%d:%d", &t.year, &t.month, &t.day, &t.hour, &t.minute, &t.second) != 6)
    throw ModelError("timestamp '" + s + "' is not YYYY-MM-DD HH:MM:SS");
  return t;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int day_of_year(const CivilTime& t) {
  static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  return before[t.month - 1] + t.day + (t.month > 2 && leap(t.year) ? 1 : 0);
}

// Days since 1970-01-01 of a proleptic Gregorian date (era arithmetic on a March-based year).
int64_t days_since_epoch(const CivilTime& t) {
  const int64_t y = t.year - (t.month <= 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;
  const int64_t month_index = t.month > 2 ? t.month - 3 : t.month + 9;
  const int64_t day_of_era_year = (153 * month_index + 2) / 5 + t.day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_era_year;
  return era * 146097 + day_of_era - 719468;
}

int weekday_monday0(const CivilTime& t) {  // 1970-01-01 was a Thursday (3 with Monday = 0)
  const int64_t d = days_since_epoch(t);
  return static_cast<int>(((d % 7) + 7 + 3) % 7);
}

}  // namespace

std::vector<float> time_features(const std::string& timestamp, char freq) {
  CivilTime t = parse_time(timestamp);
  std::vector<double> f;
  if (freq == 't') f.push_back(t.minute / 59.0 - 0.5);
  else if (freq != 'h') throw ModelError(std::string("time features: freq '") + freq + "' is not supported (h or t)");
  f.push_back(t.hour / 23.0 - 0.5);
  f.push_back(weekday_monday0(t) / 6.0 - 0.5);
  f.push_back((t.day - 1) / 30.0 - 0.5);
  f.push_back((day_of_year(t) - 1) / 365.0 - 0.5);
  return {f.begin(), f.end()};
}

EttScaler read_ett_scaler(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ModelError("scaler file '" + path + "': cannot open");
  try {
    auto doc = nlohmann::json::parse(in);
    EttScaler s;
    s.features = doc.value("features", "S");
    s.target = doc.value("target", "OT");
    s.mean = doc.at("mean").get<std::vector<double>>();
    s.std_dev = doc.at("std").get<std::vector<double>>();
    if (s.mean.size() != s.std_dev.size()) throw ModelError("scaler file '" + path + "': mean and std differ in length");
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw ModelError("scaler file '" + path + "': " + e.what());
  }
}

EttTable read_ett_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ModelError("ETT file '" + path + "': cannot open");
  EttTable table;
  std::string line;
  std::getline(in, line);
  std::stringstream header(line);
  std::string cell;
  std::getline(header, cell, ',');
  if (cell != "date") throw ModelError("ETT file '" + path + "': first column is '" + cell + "', expected 'date'");
  while (std::getline(header, cell, ',')) table.columns.push_back(cell);
  for (size_t n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::stringstream row(line);
    std::getline(row, cell, ',');
    table.timestamps.push_back(cell);
    size_t got = 0;
    while (std::getline(row, cell, ',')) {
      try {
        table.values.push_back(std::stod(cell));
      } catch (const std::exception&) {
        throw ModelError("ETT file '" + path + "' line " + std::to_string(n) + ": '" + cell + "' is not a number");
      }
      ++got;
    }
    if (got != table.columns.size())
      throw ModelError("ETT file '" + path + "' line " + std::to_string(n) + ": " + std::to_string(got) + " values, expected " +
                       std::to_string(table.columns.size()));
  }
  if (table.rows() < 2) throw ModelError("ETT file '" + path + "': no data");
  auto a = parse_time(table.timestamps[0]), b = parse_time(table.timestamps[1]);
  table.quarter_hourly = a.hour == b.hour && b.minute - a.minute == 15;
  return table;
}

// Official borders (§6): 12/4/4 "months" of 30 days, ×4 rows per hour for ETTm.
std::pair<int64_t, int64_t> split_rows(const EttTable& table, EttSplit split, int seq_len) {
  const int64_t month = 30 * 24 * (table.quarter_hourly ? 4 : 1);
  const int64_t begin[] = {0, 12 * month - seq_len, 16 * month - seq_len};
  const int64_t end[] = {12 * month, 16 * month, 20 * month};
  const auto i = static_cast<size_t>(split);
  if (end[i] > static_cast<int64_t>(table.rows()))
    throw ModelError("ETT table has " + std::to_string(table.rows()) + " rows; the split needs " + std::to_string(end[i]));
  return {begin[i], end[i]};
}

void train_statistics(const EttTable& table, const std::vector<int>& columns, std::vector<double>& mean,
                      std::vector<double>& std_dev) {
  auto [begin, end] = split_rows(table, EttSplit::train, 0);
  const size_t width = table.columns.size();
  mean.assign(columns.size(), 0.0);
  std_dev.assign(columns.size(), 0.0);
  for (size_t c = 0; c < columns.size(); ++c) {
    for (int64_t r = begin; r < end; ++r) mean[c] += table.values[static_cast<size_t>(r) * width + static_cast<size_t>(columns[c])];
    mean[c] /= static_cast<double>(end - begin);
    for (int64_t r = begin; r < end; ++r) {
      double d = table.values[static_cast<size_t>(r) * width + static_cast<size_t>(columns[c])] - mean[c];
      std_dev[c] += d * d;
    }
    std_dev[c] = std::sqrt(std_dev[c] / static_cast<double>(end - begin));
  }
}

EttWindows make_windows(const EttTable& table, EttSplit split, const std::vector<int>& columns,
                        const std::vector<double>& mean, const std::vector<double>& std_dev, char freq, int seq_len,
                        int label_len, int pred_len) {
  auto [begin, end] = split_rows(table, split, seq_len);
  EttWindows w;
  w.channels = static_cast<int64_t>(columns.size());
  w.rows = end - begin;
  w.seq_len = seq_len;
  w.label_len = label_len;
  w.pred_len = pred_len;
  const size_t width = table.columns.size();
  for (int64_t r = begin; r < end; ++r) {
    for (size_t c = 0; c < columns.size(); ++c) {
      double v = table.values[static_cast<size_t>(r) * width + static_cast<size_t>(columns[c])];
      w.scaled.push_back(static_cast<float>((v - mean[c]) / std_dev[c]));
    }
    auto f = time_features(table.timestamps[static_cast<size_t>(r)], freq);
    w.time_features = static_cast<int64_t>(f.size());
    w.marks.insert(w.marks.end(), f.begin(), f.end());
  }
  if (w.count() < 1) throw ModelError("ETT split is shorter than seq_len + pred_len");
  return w;
}

void EttWindows::batch(int64_t first, int64_t n, Tensor& x_enc, Tensor& x_mark_enc, Tensor& x_dec, Tensor& x_mark_dec,
                       Tensor& truth) const {
  const int64_t c = channels, f = time_features, l_dec = label_len + pred_len;
  x_enc.resize({n, seq_len, c});
  x_mark_enc.resize({n, seq_len, f});
  x_dec.resize({n, l_dec, c});
  x_mark_dec.resize({n, l_dec, f});
  truth.resize({n, pred_len, c});
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = first + i, dec_start = s + seq_len - label_len;
    std::copy_n(scaled.begin() + s * c, seq_len * c, x_enc.ptr() + i * seq_len * c);
    std::copy_n(marks.begin() + s * f, seq_len * f, x_mark_enc.ptr() + i * seq_len * f);
    float* xd = x_dec.ptr() + i * l_dec * c;
    std::copy_n(scaled.begin() + dec_start * c, label_len * c, xd);
    std::fill(xd + label_len * c, xd + l_dec * c, 0.f);
    std::copy_n(marks.begin() + dec_start * f, l_dec * f, x_mark_dec.ptr() + i * l_dec * f);
    std::copy_n(scaled.begin() + (s + seq_len) * c, pred_len * c, truth.ptr() + i * pred_len * c);
  }
}

}  // namespace kinformer::models
