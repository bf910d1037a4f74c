#include "models/npy.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "models/model_error.hpp"

namespace kinformer::models {
namespace {

struct RawNpy {
  std::string descr;
  Shape shape;
  std::string payload;  // the raw array bytes
};

[[noreturn]] void fail_npy(const std::string& path, const std::string& why) {
  throw ModelError("npy file '" + path + "': " + why);
}

// Finds `'key':` in the header dict and returns the text after it.
std::string after_key(const std::string& header, const std::string& key, const std::string& path) {
  auto at = header.find("'" + key + "'");
  if (at == std::string::npos) fail_npy(path, "header has no '" + key + "'");
  auto colon = header.find(':', at);
  if (colon == std::string::npos) fail_npy(path, "malformed header");
  return header.substr(colon + 1);
}

RawNpy read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_npy(path, "cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) fail_npy(path, "not a .npy file (bad magic)");
  auto major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail_npy(path, "truncated header");
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_at = 12;
  } else {
    fail_npy(path, "unsupported format version " + std::to_string(major));
  }
  if (bytes.size() < header_at + header_len) fail_npy(path, "truncated header");
  std::string header = bytes.substr(header_at, header_len);
  RawNpy raw;
  std::string d = after_key(header, "descr", path);
  auto q1 = d.find('\''), q2 = d.find('\'', q1 + 1);
  if (q1 == std::string::npos || q2 == std::string::npos) fail_npy(path, "malformed descr");
  raw.descr = d.substr(q1 + 1, q2 - q1 - 1);
  std::string fo = after_key(header, "fortran_order", path);
  if (fo.find("True") < fo.find(',')) fail_npy(path, "Fortran-order arrays are not supported");
  std::string s = after_key(header, "shape", path);
  auto open = s.find('('), close = s.find(')');
  if (open == std::string::npos || close == std::string::npos) fail_npy(path, "malformed shape");
  std::string dims = s.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ',')) ++pos;
    if (pos >= dims.size()) break;
    // Digits only (no std::stoll: it throws on junk and overflows silently on sign tricks).
    int64_t dim = 0;
    size_t start = pos;
    while (pos < dims.size() && dims[pos] >= '0' && dims[pos] <= '9') {
      if (dim > (INT64_MAX - 9) / 10) fail_npy(path, "shape dimension too large in (" + dims + ")");
      dim = dim * 10 + (dims[pos++] - '0');
    }
    if (pos == start || (pos < dims.size() && dims[pos] != ',' && dims[pos] != ' '))
      fail_npy(path, "malformed shape (" + dims + ")");
    raw.shape.push_back(dim);
  }
  raw.payload = bytes.substr(header_at + header_len);
  return raw;
}

// The element count, once the payload is known to hold that many `item`-byte elements:
// callers allocate only after this check.
size_t checked_count(const RawNpy& raw, size_t item, const std::string& path) {
  uint64_t bytes = 0;
  if (!checked_byte_size(raw.shape, item, bytes))
    fail_npy(path, "shape " + to_string(raw.shape) + " is too large");
  if (raw.payload.size() < bytes)
    fail_npy(path, "truncated: shape " + to_string(raw.shape) + " needs " + std::to_string(bytes) +
                   " bytes, file has " + std::to_string(raw.payload.size()));
  return static_cast<size_t>(bytes / item);
}

}  // namespace

Tensor read_npy(const std::string& path) {
  RawNpy raw = read_raw(path);
  Tensor t;
  if (raw.descr == "<f4") {
    size_t n = checked_count(raw, 4, path);
    t.resize(raw.shape);
    // data() of an empty vector may be null, which memcpy must not get even for 0 bytes.
    if (n > 0) std::memcpy(t.data.data(), raw.payload.data(), n * 4);
  } else if (raw.descr == "<f8") {
    size_t n = checked_count(raw, 8, path);
    t.resize(raw.shape);
    for (size_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, raw.payload.data() + 8 * i, 8);
      t.data[i] = static_cast<float>(v);
    }
  } else {
    fail_npy(path, "dtype '" + raw.descr + "' is not float32/float64");
  }
  return t;
}

IndexArray read_npy_indices(const std::string& path) {
  RawNpy raw = read_raw(path);
  IndexArray a{raw.shape, {}};
  bool wide = raw.descr == "<i8" || raw.descr == "<u8";
  if (!wide && raw.descr != "<i4" && raw.descr != "<u4") fail_npy(path, "dtype '" + raw.descr + "' is not an integer type");
  size_t n = checked_count(raw, wide ? 8 : 4, path);
  a.data.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (wide) {
      std::memcpy(&a.data[i], raw.payload.data() + 8 * i, 8);
    } else {
      int32_t v;
      std::memcpy(&v, raw.payload.data() + 4 * i, 4);
      a.data[i] = v;
    }
  }
  return a;
}

void write_npy(const std::string& path, const Tensor& tensor) {
  std::string shape = "(";
  for (auto d : tensor.shape) shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1) shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Total header (magic 10 bytes + dict + '\n') is padded to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) fail_npy(path, "cannot create");
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(tensor.data.data()), static_cast<std::streamsize>(tensor.data.size() * 4));
  if (!out) fail_npy(path, "write failed");
}

}  // namespace kinformer::models
