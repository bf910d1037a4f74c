// The example programs end to end (issue 18): forecast_pipeline against an API
// server writes forecasts into the MetricSeries' status and charts them, and
// ett_replay prints the same test MSE/MAE as `kinformer eval-ett` on the same model.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include "examples/forecasting/metric_series.hpp"
#include "examples/forecasting/series_api.hpp"
#include "tests/support/child_process.hpp"

namespace fc = kinformer::forecasting;
using kinformer::testing::ChildProcess;

namespace {

const std::string bin_dir = KINFORMER_BIN_DIR;
const std::string weights = std::string(KINFORMER_SOURCE_DIR) + "/models/weights/etth1_s_24";

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kinformer-examples-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The CC BY-ND data is read in place from ../shared beside the repository, never copied.
std::string etth1_path() {
  std::string path = std::string(KINFORMER_SOURCE_DIR) + "/../shared/data/ett/ETTh1.csv";
  if (!std::ifstream(path))
    FAIL("ETTh1.csv not found at " << path << " (the shared data folder must sit beside the repo)");
  return path;
}

/// Runs a program to its end (at most `limit`); its exit code, stdout and stderr.
struct Ran {
  int exit_code;
  std::string out, err;
};
Ran run(const std::string& program, std::vector<std::string> args, const TempDir& dir, const std::string& tag,
        std::chrono::seconds limit) {
  ChildProcess child(program, std::move(args), dir / (tag + ".out"), dir / (tag + ".err"));
  REQUIRE(child.started());
  const int code = child.wait_exit(limit);
  INFO(tag << " stderr (tail): "
           << child.err().substr(child.err().size() > 2000 ? child.err().size() - 2000 : 0));
  if (code == -1) FAIL(tag << " did not exit within " << limit.count() << " s: stuck?");
  return {code, child.out(), child.err()};
}

}  // namespace

TEST_CASE("forecast_pipeline writes forecasts into the status of every series and charts them",
          "[forecast_pipeline][integration]") {
  TempDir dir;
  auto server = fc::start_embedded_server();  // the test's own, so it can read status after the program ended
  REQUIRE(server);
  auto ran =
      run(bin_dir + "/forecast_pipeline",
          {"--server", (*server)->url(), "--duration", "2", "--period-ms", "100", "--svg-dir", dir / "plots"},
          dir, "forecast_pipeline", std::chrono::seconds(180));
  INFO("stdout: " << ran.out);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("forecast metrics/oil-temp-a from ") != std::string::npos);  // it prints forecasts
  for (const std::string name : {"oil-temp-a", "oil-temp-b", "oil-temp-c"}) {
    auto response = (*server)->call("GET", fc::series_path("metrics", name));
    REQUIRE(response.status == 200);
    auto object = kinformer::Object::parse(response.body);
    REQUIRE(object);
    auto series = fc::MetricSeries::decode(*object.value());
    REQUIRE(series);
    INFO(name);
    CHECK(series->points.size() == 96);  // the window it keeps
    REQUIRE(series->forecast);
    CHECK(series->forecast->model == "etth1_s_24");
    CHECK(series->forecast->points.size() == 24);
    // A forecast made from one of the series' points (the very last one unless the run ended mid-flight).
    CHECK(series->forecast->based_on >= series->points.front().time);
    CHECK(series->forecast->based_on <= series->points.back().time);
    const std::string svg = slurp(dir / ("plots/" + name + ".svg"));
    CHECK(svg.find("metrics/" + name) != std::string::npos);
    CHECK(svg.find("(°C)") != std::string::npos);
    CHECK(svg.find("stroke-dasharray=\"7 4\" points=") != std::string::npos);  // the forecast
    CHECK(svg.find("stroke-dasharray=\"3 3\" points=") != std::string::npos);  // the naive forecast
    CHECK(svg.find("stroke-dasharray=\"1 3\" points=") != std::string::npos);  // what actually came
    // Forecasts kept coming as points arrived, so the one in status carries the score of an
    // earlier one against the points that came since, beside the naive forecast's.
    REQUIRE(series->forecast->last_score);
    CHECK(series->forecast->last_score->points >= 1);
    CHECK(series->forecast->last_score->based_on < series->forecast->based_on);
    CHECK(series->forecast->last_score->naive_mae >= 0);
    // The points are the ETT test split's oil temperature (from 2017-10-24), not a synthetic curve.
    CHECK(fc::format_time(series->points.front().time).substr(0, 7) >= "2017-10");
  }
  (void)(*server)->stop();
}

TEST_CASE("ett_replay prints the test MSE and MAE of kinformer eval-ett on the same model",
          "[ett_replay][integration]") {
  TempDir dir;
  const std::string data = etth1_path();
  const std::vector<std::string> model = {
      "--config", weights + ".json",        "--weights", weights + ".safetensors",
      "--scaler", weights + ".scaler.json", "--data",    data};
  auto eval = run(
      bin_dir + "/kinformer",
      [&] {
        std::vector<std::string> args{"eval-ett"};
        args.insert(args.end(), model.begin(), model.end());
        return args;
      }(),
      dir, "eval-ett", std::chrono::seconds(300));
  REQUIRE(eval.exit_code == 0);
  std::smatch expected;
  REQUIRE(std::regex_search(eval.out, expected, std::regex("mse ([0-9.]+) mae ([0-9.]+) over 2848 windows")));

  auto replay = run(bin_dir + "/ett_replay", model, dir, "ett_replay", std::chrono::seconds(600));
  INFO("ett_replay stdout: " << replay.out);
  REQUIRE(replay.exit_code == 0);
  std::smatch got;
  REQUIRE(
      std::regex_search(replay.out, got, std::regex("\nmse=([0-9.]+) mae=([0-9.]+)\n$")));  // the last line
  CHECK(got[1].str() == expected[1].str());
  CHECK(got[2].str() == expected[2].str());
  CHECK(replay.out.find("2848 windows") != std::string::npos);
  CHECK(std::regex_search(replay.out, std::regex("windows_per_s=[0-9.]+ mean_batch=[0-9.]+")));
  CHECK(replay.err.find("2848/2848 windows") != std::string::npos);  // the progress bar got to the end
}
