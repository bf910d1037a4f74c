// fuzz/fuzz_wal_record.cpp: the write-ahead log reader on an arbitrary segment: the
// segment header and record framing (scan_segment, and scan_records on the same bytes)
// and then each record's payload decoded as recovery decodes it (parse_persisted_json()
// with its depth limit, then decode_persisted_object() per event, as
// Persistence::replay_record does before it touches the store).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/resource_version.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/storage/log_format.hpp"
#include "apiserver/storage/persisted_object.hpp"

namespace storage = kinformer::apiserver::storage;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto segment = storage::scan_segment(bytes);
  if (segment.tail == storage::ScanResult::Tail::clean && bytes.size() < storage::segment_header_bytes)
    __builtin_trap();  // a segment shorter than its header is never whole
  auto scan = storage::scan_records(bytes);
  std::size_t end = 0;
  for (const auto& record : scan.records) {
    // Records are in order, inside the bytes, and the bad tail starts after them.
    if (record.offset < end || record.payload.data() < bytes.data() ||
        record.payload.data() + record.payload.size() > bytes.data() + bytes.size())
      __builtin_trap();
    end = record.offset + storage::record_header_bytes + record.payload.size();
    auto parsed = storage::parse_persisted_json(record.payload, "fuzz");
    if (!parsed || !parsed->is_object()) continue;
    const auto& payload = parsed.value();
    auto events = payload.find("events");
    if (events == payload.end() || !events->is_array()) continue;
    static const nlohmann::json missing;
    for (const auto& event : *events) {
      if (!event.is_object()) continue;
      auto resource = event.find("resource");
      auto object = event.find("object");
      (void)storage::decode_persisted_object(registry, resource == event.end() ? missing : *resource,
                                             object == event.end() ? missing : *object, kinformer::apiserver::max_revision,
                                             "fuzz");
    }
  }
  if (scan.tail != storage::ScanResult::Tail::clean && scan.bad_offset != end) __builtin_trap();
  return 0;
}
