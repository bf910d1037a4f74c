// apiserver/storage/log_format.hpp
//
// The framing of write-ahead log records: how records are laid out in a segment file
// and how a segment is read back, telling a torn tail from corruption.
//
//   segment = header | record... | zeros
//   header  = "KFWAL001" | created (u64 LE: the file's size when it was created)
//   record  = length (u32 LE, payload bytes) | crc (u32 LE, CRC-32C of the length's
//             four bytes followed by the payload) | payload
//
// Contract
//   * append_record() frames one payload; scan_records() walks a run of records and
//     returns every record before the first bad one (bad = header or payload past the
//     end, length above max_record_bytes, checksum mismatch).
//   * scan_segment() reads a whole segment file (issue 33, finding 10). A segment is
//     created whole (header and preallocated zeros written and synced under a temporary
//     name, then linked to its own), and a crash never shortens a file, so a segment
//     shorter than its header, or shorter than the size its header says it was created
//     with, was cut: that is `corrupt` at the offset where its records stop, never a
//     torn tail, even in the newest segment. A file that does not start with the magic
//     is a segment of an older kinformer (no header): scan_records() from byte 0.
//     Offsets are the file's.
//   * Zeros are no record (a zero length has a non-zero CRC): where only zero bytes
//     remain, the records end and the tail is `clean`. Segments are preallocated with
//     zeros (wal.hpp), so that is the normal end of a live segment.
//   * A bad record is `torn` when it can be the remains of a write that a crash cut
//     short: no non-zero byte lies past the bytes it claims (its header, a header cut
//     short or a length running past the end of the file claims the rest of the file),
//     so a torn record followed by zeros is torn. Anything else is `corrupt`: data
//     follows it. A write's pages reach the disk in any order, so after a power loss
//     (not a process kill, which keeps the page cache) a lost page followed by a
//     persisted one of an unacknowledged batch also reads as corrupt: start-up then
//     refuses and --repair drops it.
//   * A payload is the JSON of one store write: {"events":[{"type":"ADDED",
//     "resource":"pods./v1","object":{...}}, ...]} (encode_events()).
// Threading: pure functions. Errors: reported in ScanResult, never thrown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/storage/store.hpp"

namespace kinformer::apiserver::storage {

constexpr std::size_t record_header_bytes = 8;
constexpr std::uint32_t max_record_bytes = 1u << 30;
constexpr std::size_t segment_header_bytes = 16;
// Read as a record length, the magic's first four bytes exceed max_record_bytes: no
// headerless segment starts with them.
constexpr std::string_view segment_magic = "KFWAL001";

/// The header of a segment created `created_bytes` long (header included).
std::string segment_header(std::uint64_t created_bytes);

/// Appends the framed record to `out`.
void append_record(std::string& out, std::string_view payload);

/// The payload of one write: its events in order.
std::string encode_events(const std::vector<EventPtr>& events);

struct ScannedRecord {
  std::size_t offset = 0;    // of the header
  std::string_view payload;  // points into the scanned bytes
};

struct ScanResult {
  enum class Tail { clean, torn, corrupt };
  std::vector<ScannedRecord> records;
  Tail tail = Tail::clean;
  std::size_t bad_offset = 0;  // where the first bad record (or the zeros) starts (== valid bytes)
  std::string why;             // what is wrong with it
};

ScanResult scan_records(std::string_view bytes);
/// created_bytes: from the header; 0 for a headerless segment (or one too short for it).
ScanResult scan_segment(std::string_view bytes, std::uint64_t* created_bytes = nullptr);

}  // namespace kinformer::apiserver::storage
