// models/ett_dataset.hpp
//
// EttDataset: the official ETT data pipeline (informer-model.md §5-§6) for
// evaluation: reads an ETT CSV by path (never copies it: CC BY-ND), computes the
// timeF time features, scales with given train statistics, and cuts the
// train/val/test windows with the official borders (hourly ×1, 15-minute ×4).
//
// Contract
//   * Features: S (target column only), M (all value columns), MS (all in, target
//     out: truth is the last column); chosen by the caller.
//   * Window s of a split: encoder rows s .. s+seq_len−1, decoder rows
//     s+seq_len−label_len .. s+seq_len+pred_len−1; x_dec = the label_len true rows
//     followed by pred_len zeros.
//   * time_features(): freq h -> [hour/23, weekday/6, (day−1)/30, (yday−1)/365] − 0.5;
//     freq t prepends minute/59 − 0.5.
// Errors: ModelError naming the file and line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/tensor.hpp"

namespace kinformer::models {

struct EttTable {
  std::vector<std::string> columns;     // value columns (without "date")
  std::vector<std::string> timestamps;  // "YYYY-MM-DD HH:MM:SS"
  std::vector<double> values;           // [rows, columns]
  bool quarter_hourly = false;          // ETTm: 15-minute steps
  size_t rows() const { return timestamps.size(); }
};

EttTable read_ett_csv(const std::string& path);

/// Time features of one timestamp for freq 'h' (4 values) or 't' (5 values).
std::vector<float> time_features(const std::string& timestamp, char freq);

/// Train-split mean and population std of the given columns (the official scaler fit).
void train_statistics(const EttTable& table, const std::vector<int>& columns, std::vector<double>& mean,
                      std::vector<double>& std_dev);

/// The scaler file of tools/train_informer.py: {"features", "target", "mean", "std"}.
struct EttScaler {
  std::string features = "S";  // S, M or MS
  std::string target = "OT";
  std::vector<double> mean, std_dev;
};

EttScaler read_ett_scaler(const std::string& path);

enum class EttSplit { train, val, test };

/// The split's rows [first, end) of the table, the official borders (§6); val and
/// test start seq_len rows early so that their first window ends at the border.
/// Throws ModelError when the table is too short.
std::pair<int64_t, int64_t> split_rows(const EttTable& table, EttSplit split, int seq_len);

struct EttWindows {
  std::vector<float> scaled;  // [split rows, C] scaled input columns
  std::vector<float> marks;   // [split rows, F_t]
  int64_t channels = 0, time_features = 0, rows = 0;
  int seq_len = 0, label_len = 0, pred_len = 0;
  int64_t count() const { return rows - seq_len - pred_len + 1; }
  /// Fills a batch of windows [first, first+n): inputs as the model takes them and
  /// the truth [n, pred_len, C] (all input columns; callers pick the target).
  void batch(int64_t first, int64_t n, Tensor& x_enc, Tensor& x_mark_enc, Tensor& x_dec, Tensor& x_mark_dec,
             Tensor& truth) const;
};

/// The windows of one split, scaled with (mean, std) per chosen column.
EttWindows make_windows(const EttTable& table, EttSplit split, const std::vector<int>& columns,
                        const std::vector<double>& mean, const std::vector<double>& std_dev, char freq, int seq_len,
                        int label_len, int pred_len);

}  // namespace kinformer::models
