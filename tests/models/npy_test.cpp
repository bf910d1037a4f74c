#include "models/npy.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "models/model_error.hpp"

namespace models = kinformer::models;

TEST_CASE("a float32 tensor survives a .npy write and read", "[models][npy][unit]") {
  models::Tensor t({2, 3, 4});
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i) * 0.5f - 3.f;
  const std::string path = "npy_test_roundtrip.npy";
  models::write_npy(path, t);
  auto back = models::read_npy(path);
  CHECK(back.shape == t.shape);
  CHECK(back.data == t.data);
  std::remove(path.c_str());
}

TEST_CASE("a truncated .npy file is an error that says so", "[models][npy][unit]") {
  models::Tensor t({10, 10});
  const std::string path = "npy_test_truncated.npy";
  models::write_npy(path, t);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 40));
  CHECK_THROWS_WITH(models::read_npy(path), Catch::Contains("truncated"));
  std::remove(path.c_str());
  CHECK_THROWS_WITH(models::read_npy("does-not-exist.npy"), Catch::Contains("cannot open"));
}
