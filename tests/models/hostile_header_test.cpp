// Regression tests for issue 19 (fuzzing): .npy and .safetensors headers whose shapes or
// offsets are not plain non-negative integers, or whose sizes overflow, are ModelErrors;
// before, they threw std::invalid_argument (npy), hit undefined signed overflow and float
// casts, or allocated a wrapped-around size.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "models/model_error.hpp"
#include "models/npy.hpp"
#include "models/safetensors.hpp"
#include "models/tensor.hpp"

namespace models = kinformer::models;

namespace {

// A version 1.0 .npy file with this header dict and payload.
std::string npy_bytes(const std::string& dict, const std::string& payload) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + payload;
}

// A .safetensors file with this JSON header and data section.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace

TEST_CASE("issue 19: checked_byte_size rejects negative dimensions and overflow", "[models][item-1][unit]") {
  std::uint64_t bytes = 0;
  CHECK(models::checked_byte_size({2, 3}, 4, bytes));
  CHECK(bytes == 24);
  CHECK(models::checked_byte_size({}, 8, bytes));
  CHECK(bytes == 8);
  CHECK(models::checked_byte_size({0, INT64_MAX}, 4, bytes));
  CHECK(bytes == 0);
  CHECK_FALSE(models::checked_byte_size({-1, -4}, 4, bytes));
  CHECK_FALSE(models::checked_byte_size({INT64_C(1) << 40, INT64_C(1) << 30}, 4, bytes));
  CHECK_FALSE(models::checked_byte_size({INT64_C(1) << 62}, 4, bytes));
}

TEST_CASE("issue 19: an npy shape that is not digits is a ModelError, not std::invalid_argument",
          "[models][item-1][unit]") {
  auto path = write_file("hostile_npy_junk.npy",
                         npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }", ""));
  CHECK_THROWS_WITH(models::read_npy(path), Catch::Contains("malformed shape"));
  write_file(path, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -3), }",
                             std::string(24, '\0')));
  CHECK_THROWS_AS(models::read_npy(path), models::ModelError);
  write_file(path,
             npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""));
  CHECK_THROWS_AS(models::read_npy_indices(path), models::ModelError);
  std::remove(path.c_str());
}

TEST_CASE("issue 19: an npy shape too large for the file fails before allocating it",
          "[models][item-1][unit]") {
  // 2^40 float32 elements: the old reader resized the tensor (4 TiB) before checking the payload.
  auto path =
      write_file("hostile_npy_huge.npy",
                 npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", "abcd"));
  CHECK_THROWS_WITH(models::read_npy(path), Catch::Contains("truncated"));
  // 2^62 x 4 bytes wraps to 0 in 64 bits: must not read as an empty array.
  write_file(path,
             npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", ""));
  CHECK_THROWS_WITH(models::read_npy(path), Catch::Contains("too large"));
  std::remove(path.c_str());
}

TEST_CASE("issue 19: a safetensors shape whose byte size wraps around is a ModelError",
          "[models][item-1][unit]") {
  // 2^62 F32 elements are 2^64 bytes, 0 modulo 2^64: the old check accepted empty offsets.
  auto path = write_file(
      "hostile.safetensors",
      safetensors_bytes(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", ""));
  CHECK_THROWS_WITH(models::read_safetensors(path), Catch::Contains("too large"));
  write_file(path,
             safetensors_bytes(R"({"w":{"dtype":"F32","shape":[-1,-1],"data_offsets":[0,4]}})", "abcd"));
  CHECK_THROWS_WITH(models::read_safetensors(path), Catch::Contains("shape"));
  std::remove(path.c_str());
}

TEST_CASE("issue 19: safetensors shapes and offsets that are not integers are ModelErrors",
          "[models][item-1][unit]") {
  auto path =
      write_file("hostile_float.safetensors",
                 safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1e300],"data_offsets":[0,4]}})", "abcd"));
  CHECK_THROWS_WITH(models::read_safetensors(path), Catch::Contains("not an integer"));
  write_file(path, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", "abcd"));
  CHECK_THROWS_WITH(models::read_safetensors(path), Catch::Contains("data_offsets"));
  write_file(path,
             safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}})",
                               "abcd"));
  CHECK_THROWS_AS(models::read_safetensors(path), models::ModelError);
  std::remove(path.c_str());
}

TEST_CASE("issue 19: an npy array with a zero dimension reads as empty without a null memcpy",
          "[models][item-1][unit]") {
  // UBSan (the ASan build) flagged memcpy(nullptr, ..., 0) for this shape.
  auto path = write_file("hostile_npy_empty.npy",
                         npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0), }", ""));
  auto t = models::read_npy(path);
  CHECK(t.shape == models::Shape{2, 0});
  CHECK(t.data.empty());
  std::remove(path.c_str());
}
