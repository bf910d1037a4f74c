#include "models/safetensors.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "models/model_error.hpp"

namespace kinformer::models {
namespace {

[[noreturn]] void fail_weights(const std::string& path, const std::string& why) {
  throw ModelError("weights file '" + path + "': " + why);
}

// A JSON array of integers, each in [min, INT64_MAX]: nlohmann's get<> would convert
// floats and out-of-range numbers with an undefined cast.
std::vector<int64_t> integer_array(const nlohmann::json& value, int64_t min, const std::string& path,
                                   const std::string& what) {
  if (!value.is_array()) fail_weights(path, what + " is not an array");
  std::vector<int64_t> out;
  for (const auto& v : value) {
    bool fits = v.is_number_integer() && (v.is_number_unsigned() ? v.get<uint64_t>() <= INT64_MAX : true);
    if (!fits || v.get<int64_t>() < min)
      fail_weights(path, what + " holds " + v.dump() + ", not an integer >= " + std::to_string(min));
    out.push_back(v.get<int64_t>());
  }
  return out;
}

size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F16" || dtype == "BF16") return 2;
  return 0;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) bits = sign | 0x7f800000u | (mant << 13);
  else bits = sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

std::map<std::string, SafeTensor> read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_weights(path, "cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8) fail_weights(path, "truncated: shorter than the 8-byte header size");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (header_size > bytes.size() - 8) fail_weights(path, "truncated: header of " + std::to_string(header_size) + " bytes does not fit");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_size));
  } catch (const nlohmann::json::exception& e) {
    fail_weights(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail_weights(path, "header is not a JSON object");
  const char* data = bytes.data() + 8 + header_size;
  const uint64_t data_size = bytes.size() - 8 - header_size;
  std::map<std::string, SafeTensor> out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& info = it.value();
    const std::string& name = it.key();
    SafeTensor t;
    try {
      t.dtype = info.at("dtype").get<std::string>();
      t.shape = integer_array(info.at("shape"), 0, path, "tensor '" + name + "': shape");
      std::vector<uint64_t> offsets;
      for (auto o : integer_array(info.at("data_offsets"), 0, path, "tensor '" + name + "': data_offsets"))
        offsets.push_back(static_cast<uint64_t>(o));
      if (offsets.size() != 2 || offsets[0] > offsets[1]) fail_weights(path, "tensor '" + name + "': bad data_offsets");
      size_t item = dtype_size(t.dtype);
      if (item == 0) fail_weights(path, "tensor '" + name + "': unsupported dtype " + t.dtype);
      uint64_t bytes_needed = 0;
      if (!checked_byte_size(t.shape, item, bytes_needed))
        fail_weights(path, "tensor '" + name + "': shape " + to_string(t.shape) +
                       " has a negative dimension or is too large");
      const uint64_t n = bytes_needed / item;
      if (offsets[1] - offsets[0] != bytes_needed)
        fail_weights(path, "tensor '" + name + "': " + std::to_string(offsets[1] - offsets[0]) + " bytes for shape " +
                       to_string(t.shape) + " of " + t.dtype);
      if (offsets[1] > data_size)
        fail_weights(path, "truncated: tensor '" + name + "' needs bytes [" + std::to_string(offsets[0]) + ", " +
                       std::to_string(offsets[1]) + ") of the data section, which has " + std::to_string(data_size));
      const char* src = data + offsets[0];
      if (t.dtype[0] == 'I') {
        t.integers.resize(n);
        for (uint64_t i = 0; i < n; ++i) {
          if (item == 8) {
            std::memcpy(&t.integers[i], src + 8 * i, 8);
          } else {
            int32_t v;
            std::memcpy(&v, src + 4 * i, 4);
            t.integers[i] = v;
          }
        }
      } else {
        t.values.resize(t.shape);
        for (uint64_t i = 0; i < n; ++i) {
          if (t.dtype == "F32") {
            std::memcpy(&t.values.data[i], src + 4 * i, 4);
          } else if (t.dtype == "F64") {
            double v;
            std::memcpy(&v, src + 8 * i, 8);
            t.values.data[i] = static_cast<float>(v);
          } else {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            if (t.dtype == "F16") {
              t.values.data[i] = half_to_float(h);
            } else {
              uint32_t bits = static_cast<uint32_t>(h) << 16;
              std::memcpy(&t.values.data[i], &bits, 4);
            }
          }
        }
      }
    } catch (const nlohmann::json::exception& e) {
      fail_weights(path, "tensor '" + name + "': malformed header entry (" + e.what() + ")");
    }
    out.emplace(name, std::move(t));
  }
  return out;
}

}  // namespace kinformer::models
