#include "models/ett_dataset.hpp"

#include <catch2/catch.hpp>
#include <fstream>

namespace models = kinformer::models;

namespace {

// The CC BY-ND data is read in place from ../shared beside the repository, never copied.
std::string etth1_path() {
  std::string path = std::string(KINFORMER_SOURCE_DIR) + "/../shared/data/ett/ETTh1.csv";
  if (!std::ifstream(path)) FAIL("ETTh1.csv not found at " << path << " (the shared data folder must sit beside the repo)");
  return path;
}

}  // namespace

TEST_CASE("hourly time features match the official timeF values", "[models][ett][unit]") {
  auto f = models::time_features("2016-07-01 00:00:00", 'h');
  REQUIRE(f.size() == 4);
  CHECK(f[0] == Approx(-0.5));
  CHECK(f[1] == Approx(0.166667).margin(1e-6));  // a Friday
  CHECK(f[2] == Approx(-0.5));
  CHECK(f[3] == Approx(-0.001370).margin(1e-6));
  CHECK(models::time_features("2016-07-01 01:00:00", 'h')[0] == Approx(-0.456522).margin(1e-6));
  CHECK(models::time_features("2016-07-01 00:15:00", 't')[0] == Approx(-0.245763).margin(1e-6));
  CHECK(models::time_features("2018-12-31 23:00:00", 'h')[3] == Approx(0.5 - 1.0 / 365).margin(1e-6));  // 365th day
}

TEST_CASE("ETTh1 splits, scaler and windows follow the official borders", "[models][ett][unit]") {
  auto table = models::read_ett_csv(etth1_path());
  CHECK(table.rows() == 17420);
  CHECK_FALSE(table.quarter_hourly);
  std::vector<double> mean, std_dev;
  models::train_statistics(table, {6}, mean, std_dev);
  CHECK(mean[0] == Approx(17.128262).margin(1e-6));
  CHECK(std_dev[0] == Approx(9.176491).margin(1e-6));
  auto test = models::make_windows(table, models::EttSplit::test, {6}, mean, std_dev, 'h', 96, 48, 24);
  CHECK(test.count() == 2857);
  models::Tensor x_enc, x_mark_enc, x_dec, x_mark_dec, truth;
  test.batch(0, 2, x_enc, x_mark_enc, x_dec, x_mark_dec, truth);
  CHECK(x_dec.shape == models::Shape{2, 72, 1});
  CHECK(x_dec.data[47] == x_enc.data[95]);  // the label rows end where the encoder window ends
  CHECK(x_dec.data[48] == 0.f);             // then zeros for the horizon
  CHECK(truth.data[0] == test.scaled[96]);  // the first forecast row follows the encoder window
}
