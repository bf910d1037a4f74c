// apiserver/storage/crc32c.hpp
//
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every
// write-ahead log record and of every snapshot file.
//
// Contract
//   * crc32c(data) is the standard CRC-32C ("123456789" -> 0xE3069283).
//   * crc32c_extend(crc, data) continues a running checksum: crc32c(a + b) ==
//     crc32c_extend(crc32c(a), b).
// Threading: pure functions. Errors: none.
#pragma once

#include <cstdint>
#include <string_view>

namespace kinformer::apiserver::storage {

std::uint32_t crc32c_extend(std::uint32_t crc, std::string_view data);
inline std::uint32_t crc32c(std::string_view data) { return crc32c_extend(0, data); }

}  // namespace kinformer::apiserver::storage
