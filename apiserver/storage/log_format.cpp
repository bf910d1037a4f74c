#include "apiserver/storage/log_format.hpp"

#include "apiserver/storage/crc32c.hpp"
#include "apiserver/storage/persisted_object.hpp"

namespace kinformer::apiserver::storage {

namespace {

void put_u32(char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint32_t get_u32(const char* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

std::uint64_t get_u64(const char* in) { return get_u32(in) | std::uint64_t(get_u32(in + 4)) << 32; }

}  // namespace

void append_record(std::string& out, std::string_view payload) {
  char header[record_header_bytes];
  put_u32(header, static_cast<std::uint32_t>(payload.size()));
  auto crc = crc32c_extend(crc32c(std::string_view(header, 4)), payload);
  put_u32(header + 4, crc);
  out.append(header, sizeof header);
  out.append(payload);
}

std::string encode_events(const std::vector<EventPtr>& events) {
  static const char* names[] = {"ADDED", "MODIFIED", "DELETED"};
  std::size_t size = 16;
  for (const auto& e : events) size += e->object->json.size() + 80;
  std::string out;
  out.reserve(size);
  out.append("{\"events\":[");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = *events[i];
    if (i) out.push_back(',');
    out.append("{\"type\":\"").append(names[static_cast<int>(e.type)]).append("\",\"resource\":\"");
    out.append(resource_id(*e.object->type)).append("\",\"object\":").append(e.object->json).append("}");
  }
  out.append("]}");
  return out;
}

ScanResult scan_records(std::string_view bytes) {
  ScanResult out;
  // Past the last non-zero byte lie only the zeros a preallocated segment starts with.
  auto last = bytes.find_last_not_of('\0');
  const std::size_t data_end = last == std::string_view::npos ? 0 : last + 1;
  constexpr auto unbounded = std::string_view::npos;
  std::size_t at = 0;
  // A bad record is torn when no non-zero byte lies past what it claims to span.
  auto bad = [&](std::string why, std::size_t claimed_end) {
    out.bad_offset = at;
    out.why = std::move(why);
    out.tail = data_end <= claimed_end ? ScanResult::Tail::torn : ScanResult::Tail::corrupt;
    return out;
  };
  while (at < data_end) {
    if (bytes.size() - at < record_header_bytes)
      return bad("a record header cut short (" + std::to_string(bytes.size() - at) + " bytes)", unbounded);
    auto length = get_u32(bytes.data() + at);
    auto crc = get_u32(bytes.data() + at + 4);
    if (length > max_record_bytes)
      return bad("a record length of " + std::to_string(length) + " bytes (the limit is " +
                     std::to_string(max_record_bytes) + ")",
                 at + record_header_bytes);
    if (bytes.size() - at - record_header_bytes < length)
      return bad("a record of " + std::to_string(length) + " bytes that runs past the end of the file",
                 unbounded);
    auto payload = bytes.substr(at + record_header_bytes, length);
    auto end = at + record_header_bytes + length;
    if (crc32c_extend(crc32c(bytes.substr(at, 4)), payload) != crc)
      return bad(length == 0 ? "a zeroed record header before non-zero bytes"
                             : "a record whose CRC-32C does not match its content",
                 end);
    out.records.push_back({at, payload});
    at = end;
  }
  out.bad_offset = at;
  return out;
}

std::string segment_header(std::uint64_t created_bytes) {
  std::string out(segment_magic);
  char size[8];
  put_u32(size, static_cast<std::uint32_t>(created_bytes));
  put_u32(size + 4, static_cast<std::uint32_t>(created_bytes >> 32));
  out.append(size, sizeof size);
  return out;
}

ScanResult scan_segment(std::string_view bytes, std::uint64_t* created_bytes) {
  if (created_bytes) *created_bytes = 0;
  if (bytes.size() < segment_header_bytes) {
    ScanResult out;
    out.tail = ScanResult::Tail::corrupt;
    out.why = "the segment is " + std::to_string(bytes.size()) + " bytes, shorter than its " +
              std::to_string(segment_header_bytes) + "-byte header: it was cut";
    return out;
  }
  if (bytes.substr(0, segment_magic.size()) != segment_magic) return scan_records(bytes);  // an older, headerless one
  const auto created = get_u64(bytes.data() + segment_magic.size());
  if (created_bytes) *created_bytes = created;
  auto out = scan_records(bytes.substr(segment_header_bytes));
  for (auto& record : out.records) record.offset += segment_header_bytes;
  out.bad_offset += segment_header_bytes;
  if (bytes.size() < created) {
    out.tail = ScanResult::Tail::corrupt;
    out.why = (out.why.empty() ? "" : out.why + ", and ") + "the segment is " + std::to_string(bytes.size()) +
              " bytes but was created " + std::to_string(created) +
              " bytes long: it was cut (a crash never shortens a segment)";
  }
  return out;
}

}  // namespace kinformer::apiserver::storage
