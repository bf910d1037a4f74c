#include "runtime/object.hpp"

#include <array>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include <simdjson.h>

#include "runtime/key.hpp"

namespace kinformer {

namespace sj = simdjson;
namespace od = simdjson::ondemand;

namespace {

// Spans into the unescaped-strings area carry this bit until the final block is
// laid out (their offsets are then moved past the JSON bytes).
constexpr std::uint32_t in_extras = 0x80000000u;
constexpr std::size_t max_json_size = in_extras - 1;

od::parser& thread_parser() {
  thread_local od::parser parser;
  return parser;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(const char* p, std::uint32_t& out) {
  out = 0;
  for (int i = 0; i < 4; ++i) {
    int d = hex_digit(p[i]);
    if (d < 0) return false;
    out = out * 16 + static_cast<std::uint32_t>(d);
  }
  return true;
}

}  // namespace

// One per thread and reused: its buffers keep their capacity, so parsing an
// object allocates only the Object's own block.
struct Object::Parts {
  std::string input;            // the JSON followed by simdjson's padding
  const char* bytes = nullptr;  // input.data()
  std::uint32_t json_size = 0;
  std::string extras;  // unescaped strings and the key
  Span api_version, kind, name, generate_name, namespace_, uid, resource_version, creation_timestamp,
      deletion_timestamp, key;
  std::int64_t generation = 0;
  std::vector<Span> labels, annotations;  // 2 spans per entry
  std::vector<OwnerSpans> owners;

  void reset(std::string_view json) {
    // Copied even where the caller's buffer has the padding (the watch stream's):
    // parsing in place there measured 13 % slower per event than copying first.
    input.assign(json.data(), json.size());
    input.append(sj::SIMDJSON_PADDING, '\0');
    bytes = input.data();
    json_size = static_cast<std::uint32_t>(json.size());
    extras.clear();
    api_version = kind = name = generate_name = namespace_ = uid = resource_version = creation_timestamp =
        deletion_timestamp = key = Span{};
    generation = 0;
    labels.clear();
    annotations.clear();
    owners.clear();
  }
};

namespace {

// Whether `v` is a JSON null. value::is_null() returns a simdjson_result, whose
// conversion to bool throws simdjson_error when the token is malformed (found by
// fuzz_object, issue 19): an error here reads as "not null", and the typed getter that
// follows reports it.
bool is_null_value(od::value& v) noexcept {
  bool null = false;
  return v.is_null().get(null) == sj::SUCCESS && null;
}

// Walks one object with simdjson On-Demand, recording metadata as spans into
// `parts.bytes`. The scanner relies on simdjson's stage 1 having validated that
// every string is closed before any value is visited.
class MetaReader {
 public:
  explicit MetaReader(Object::Parts& parts) : p_(parts) {}

  Result<void> read(od::document& doc) {
    od::object root;
    if (auto e = doc.get_object().get(root))
      return fail(e, doc, e == sj::INCORRECT_TYPE ? "the document is not a JSON object" : "malformed JSON");
    for (auto field : root) {
      od::raw_json_string key;
      if (auto e = field.key().get(key)) return fail(e, doc, "bad key");
      od::value value = field.value();
      if (key == "apiVersion") {
        if (auto r = string_span(value, "apiVersion", p_.api_version); !r) return r;
      } else if (key == "kind") {
        if (auto r = string_span(value, "kind", p_.kind); !r) return r;
      } else if (key == "metadata") {
        if (auto r = read_metadata(value); !r) return r;
      }
      // every other member (spec, status, ...) is skipped unparsed
    }
    const char* trailing = nullptr;
    if (doc.current_location().get(trailing) == sj::SUCCESS) {
      return Error{Errc::decode_failed,
                   "trailing content after the object at byte " + std::to_string(trailing - p_.bytes)};
    }
    return {};
  }

 private:
  Result<void> read_metadata(od::value& value) {
    od::object md;
    if (is_null_value(value)) return {};
    if (auto e = value.get_object().get(md)) return type_error("metadata", "an object", e);
    for (auto field : md) {
      od::raw_json_string key;
      if (auto e = field.key().get(key)) return type_error("metadata", "an object", e);
      od::value v = field.value();
      Result<void> r;
      if (key == "name") r = string_span(v, "metadata.name", p_.name);
      else if (key == "generateName") r = string_span(v, "metadata.generateName", p_.generate_name);
      else if (key == "namespace") r = string_span(v, "metadata.namespace", p_.namespace_);
      else if (key == "uid") r = string_span(v, "metadata.uid", p_.uid);
      else if (key == "resourceVersion") r = string_span(v, "metadata.resourceVersion", p_.resource_version);
      else if (key == "creationTimestamp") r = string_span(v, "metadata.creationTimestamp", p_.creation_timestamp);
      else if (key == "deletionTimestamp") r = string_span(v, "metadata.deletionTimestamp", p_.deletion_timestamp);
      else if (key == "generation") r = read_generation(v);
      else if (key == "labels") r = string_map(v, "metadata.labels", p_.labels);
      else if (key == "annotations") r = string_map(v, "metadata.annotations", p_.annotations);
      else if (key == "ownerReferences") r = read_owners(v);
      if (!r) return r;
    }
    return {};
  }

  Result<void> read_generation(od::value& v) {
    if (is_null_value(v)) return {};
    if (auto e = v.get_int64().get(p_.generation)) return type_error("metadata.generation", "an integer", e);
    return {};
  }

  Result<void> string_map(od::value& v, const char* what, std::vector<Object::Span>& out) {
    if (is_null_value(v)) return {};
    od::object obj;
    if (auto e = v.get_object().get(obj)) return type_error(what, "an object", e);
    for (auto field : obj) {
      od::raw_json_string key;
      if (auto e = field.key().get(key)) return type_error(what, "an object", e);
      Object::Span key_span;
      if (auto r = raw_string_span(key.raw(), what, key_span); !r) return r;
      od::value value = field.value();
      Object::Span value_span;
      if (auto r = string_span(value, what, value_span); !r) return r;
      out.push_back(key_span);
      out.push_back(value_span);
    }
    if (out.size() / 2 > 0xFFFF) return Error{Errc::decode_failed, std::string(what) + " has more than 65535 entries"};
    return {};
  }

  Result<void> read_owners(od::value& v) {
    if (is_null_value(v)) return {};
    od::array arr;
    if (auto e = v.get_array().get(arr)) return type_error("metadata.ownerReferences", "an array", e);
    for (auto element : arr) {
      od::object ref;
      if (auto e = element.get_object().get(ref)) return type_error("metadata.ownerReferences[]", "an object", e);
      Object::OwnerSpans owner;
      for (auto field : ref) {
        od::raw_json_string key;
        if (auto e = field.key().get(key)) return type_error("metadata.ownerReferences[]", "an object", e);
        od::value fv = field.value();
        Result<void> r;
        if (key == "apiVersion") r = string_span(fv, "ownerReferences[].apiVersion", owner.api_version);
        else if (key == "kind") r = string_span(fv, "ownerReferences[].kind", owner.kind);
        else if (key == "name") r = string_span(fv, "ownerReferences[].name", owner.name);
        else if (key == "uid") r = string_span(fv, "ownerReferences[].uid", owner.uid);
        else if (key == "controller") r = read_bool(fv, "ownerReferences[].controller", owner.controller);
        else if (key == "blockOwnerDeletion") r = read_bool(fv, "ownerReferences[].blockOwnerDeletion", owner.block_owner_deletion);
        if (!r) return r;
      }
      p_.owners.push_back(owner);
    }
    if (p_.owners.size() > 0xFFFF) return Error{Errc::decode_failed, "more than 65535 ownerReferences"};
    return {};
  }

  Result<void> read_bool(od::value& v, const char* what, bool& out) {
    if (is_null_value(v)) return {};
    if (auto e = v.get_bool().get(out)) return type_error(what, "a boolean", e);
    return {};
  }

  // A string value as a span: a view into the JSON when it has no escapes,
  // else an unescaped copy in extras. null reads as "".
  Result<void> string_span(od::value& v, const char* what, Object::Span& out) {
    std::string_view token = v.raw_json_token();
    if (!token.empty() && token.front() == 'n' && is_null_value(v)) {
      out = {};
      return {};
    }
    if (token.empty() || token.front() != '"') {
      return Error{Errc::decode_failed, std::string(what) + " must be a string at byte " +
                                            std::to_string(token.data() - p_.bytes)};
    }
    return raw_string_span(token.data() + 1, what, out);
  }

  // `s` points just past an opening quote inside the JSON buffer. Stage 1 validated
  // that the string is closed before the end of the JSON, so memchr (vectorised)
  // finds its quote; a byte loop here was the top of the watch path's profile, since
  // annotation values run to kilobytes.
  Result<void> raw_string_span(const char* s, const char* what, Object::Span& out) {
    const char* const end = p_.bytes + p_.json_size;
    const char* quote = static_cast<const char*>(std::memchr(s, '"', static_cast<std::size_t>(end - s)));
    if (!quote) return Error{Errc::decode_failed, std::string("unterminated string in ") + what};
    const char* p = static_cast<const char*>(std::memchr(s, '\\', static_cast<std::size_t>(quote - s)));
    if (!p) {
      out = {static_cast<std::uint32_t>(s - p_.bytes), static_cast<std::uint32_t>(quote - s)};
      return {};
    }
    std::string unescaped(s, p);
    for (;;) {  // at a backslash: decode its escape, then copy the run up to the next one
      const char esc = p[1];
      p += 2;
      switch (esc) {
        case '"': unescaped += '"'; break;
        case '\\': unescaped += '\\'; break;
        case '/': unescaped += '/'; break;
        case 'b': unescaped += '\b'; break;
        case 'f': unescaped += '\f'; break;
        case 'n': unescaped += '\n'; break;
        case 'r': unescaped += '\r'; break;
        case 't': unescaped += '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!read_hex4(p, cp)) return bad_escape(what, p);
          p += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
            std::uint32_t low = 0;
            if (p[0] != '\\' || p[1] != 'u' || !read_hex4(p + 2, low) || low < 0xDC00 || low > 0xDFFF)
              return bad_escape(what, p);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            p += 6;
          }
          append_utf8(unescaped, cp);
          break;
        }
        default: return bad_escape(what, p - 2);
      }
      if (p >= end) return Error{Errc::decode_failed, std::string("unterminated string in ") + what};
      quote = static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(end - p)));
      if (!quote) return Error{Errc::decode_failed, std::string("unterminated string in ") + what};
      const char* next = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(quote - p)));
      unescaped.append(p, next ? next : quote);
      if (!next) break;
      p = next;
    }
    out = {static_cast<std::uint32_t>(p_.extras.size()) | in_extras, static_cast<std::uint32_t>(unescaped.size())};
    p_.extras += unescaped;
    return {};
  }

  Result<void> bad_escape(const char* what, const char* at) {
    return Error{Errc::decode_failed,
                 std::string("invalid escape in ") + what + " at byte " + std::to_string(at - p_.bytes)};
  }

  Result<void> type_error(const char* what, const char* expected, sj::error_code e) {
    if (e == sj::INCORRECT_TYPE) return Error{Errc::decode_failed, std::string(what) + " must be " + expected};
    return Error{Errc::decode_failed, std::string(what) + ": " + sj::error_message(e)};
  }

  Result<void> error_at(od::document& doc, const std::string& reason) {
    const char* location = nullptr;
    std::size_t offset = p_.json_size;
    if (doc.current_location().get(location) == sj::SUCCESS) offset = static_cast<std::size_t>(location - p_.bytes);
    return Error{Errc::decode_failed, reason + " at byte " + std::to_string(offset)};
  }

  Result<void> fail(sj::error_code e, od::document& doc, const char* context) {
    return error_at(doc, std::string(context) + " (" + sj::error_message(e) + ")");
  }

  Object::Parts& p_;
};

}  // namespace

namespace {

// Where the spans start in an Object's bytes, their width, and how many bytes it has in all.
struct BytesLayout {
  std::size_t spans_offset, span_count, total;
  bool wide;
};

BytesLayout bytes_layout(const Object::Parts& parts);

}  // namespace

Result<ObjectPtr> Object::parse(std::string_view json) {
  if (json.size() > max_json_size) return Error{Errc::decode_failed, "object larger than 2 GiB"};
  thread_local Parts parts;
  parts.reset(json);

  od::document doc;
  auto& parser = thread_parser();
  if (auto e = parser.iterate(parts.input.data(), json.size(), parts.input.size()).get(doc)) {
    // stage 1 failed: unclosed string, bad UTF-8, empty input, ...
    return Error{Errc::decode_failed, std::string("malformed JSON (") + sj::error_message(e) + ")"};
  }
  MetaReader reader(parts);
  Result<void> read = reader.read(doc);
  if (!read) return std::move(read).error();  // NOLINT
  if (parts.name.size == 0) {
    if (parts.generate_name.size == 0) return Error{Errc::missing_field, "metadata.name is missing or empty"};
  }
  // the key: namespace/name, stored after the unescaped strings
  auto text_of = [](Span s) {
    return s.offset & in_extras ? std::string_view(parts.extras).substr(s.offset & ~in_extras, s.size)
                                : std::string_view(parts.bytes + s.offset, s.size);
  };
  if (parts.namespace_.size == 0) {
    parts.key = parts.name;
  } else {
    const std::string key = make_key(text_of(parts.namespace_), text_of(parts.name));
    parts.key = {static_cast<std::uint32_t>(parts.extras.size()) | in_extras, static_cast<std::uint32_t>(key.size())};
    parts.extras += key;
  }
  void* block = std::malloc(sizeof(Object) + bytes_layout(parts).total);
  if (!block) throw std::bad_alloc();
  return ObjectPtr::adopt(new (block) Object(parts));
}

namespace {

// The metadata spans in Object::MetaField order.
std::array<Object::Span, 10> meta_spans_of(const Object::Parts& parts) {
  return {parts.api_version,        parts.kind, parts.name,
          parts.generate_name,      parts.namespace_, parts.uid,
          parts.resource_version,   parts.creation_timestamp, parts.deletion_timestamp,
          parts.key};
}

BytesLayout bytes_layout(const Object::Parts& parts) {
  const std::size_t text_size = parts.json_size + parts.extras.size();
  BytesLayout layout{};
  constexpr std::size_t align = alignof(std::uint32_t);
  layout.spans_offset = (text_size + align - 1) / align * align;
  layout.span_count = parts.labels.size() + parts.annotations.size() + 4 * parts.owners.size();
  for (const Object::Span& s : meta_spans_of(parts)) layout.span_count += s.size > 0;
  // Every span ends inside the text, so 16-bit halves hold it when the text does.
  layout.wide = text_size > 0xFFFF;
  const std::size_t width = layout.wide ? sizeof(Object::Span) : 2 * sizeof(std::uint16_t);
  layout.total = layout.spans_offset + layout.span_count * width + parts.owners.size();
  return layout;
}

}  // namespace

// The bytes start right after the Object (bytes()), so its size keeps the spans aligned.
static_assert(sizeof(Object) % alignof(std::uint32_t) == 0);
// The fixed part the README's sixth pass counts (g++ on x86-64): the metadata spans live in the bytes.
static_assert(sizeof(Object) <= 32, "an Object's fixed part grew past 32 B");

void Object::unref() const noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  this->~Object();
  std::free(const_cast<Object*>(this));
}

Object::Object(const Parts& parts) {
  // the bytes, after this Object: JSON, unescaped strings, then (aligned) the spans and owner flags
  const std::uint32_t json_size = parts.json_size;
  const BytesLayout layout = bytes_layout(parts);
  char* block = reinterpret_cast<char*>(this + 1);
  std::memcpy(block, parts.bytes, json_size);
  std::memcpy(block + json_size, parts.extras.data(), parts.extras.size());

  json_size_ = json_size;
  generation_ = parts.generation;
  label_count_ = static_cast<std::uint16_t>(parts.labels.size() / 2);
  annotation_count_ = static_cast<std::uint16_t>(parts.annotations.size() / 2);
  owner_count_ = static_cast<std::uint16_t>(parts.owners.size());
  spans_offset_ = static_cast<std::uint32_t>(layout.spans_offset);
  wide_spans_ = layout.wide;
  char* at = block + layout.spans_offset;
  const bool wide = layout.wide;  // a local: the writes through `at` could alias the member
  auto put = [&at, json_size, wide](Span s) {
    if (s.offset & in_extras) s.offset = (s.offset & ~in_extras) + json_size;
    if (wide) {
      std::memcpy(at, &s, sizeof s);
      at += sizeof s;
    } else {
      const std::uint16_t half[2] = {static_cast<std::uint16_t>(s.offset), static_cast<std::uint16_t>(s.size)};
      std::memcpy(at, half, sizeof half);
      at += sizeof half;
    }
  };
  const auto meta = meta_spans_of(parts);
  static_assert(meta.size() == static_cast<std::size_t>(MetaField::count));
  for (std::size_t field = 0; field < meta.size(); ++field) {
    if (meta[field].size == 0) continue;  // reads as "" without a span
    present_ = static_cast<std::uint16_t>(present_ | (1u << field));
    put(meta[field]);
  }
  for (Span s : parts.labels) put(s);
  for (Span s : parts.annotations) put(s);
  for (const OwnerSpans& o : parts.owners) {
    put(o.api_version);
    put(o.kind);
    put(o.name);
    put(o.uid);
  }
  assert(at == block + owner_flags_offset());
  for (const OwnerSpans& o : parts.owners) {
    *at++ = static_cast<char>((o.controller ? owner_controller : 0u) | (o.block_owner_deletion ? owner_blocks_deletion : 0u));
  }
  assert(at == block + layout.total);
}

std::vector<Object::Entry> Object::labels() const {
  std::vector<Entry> out;
  out.reserve(label_count_);
  for (std::size_t i = 0; i < label_count_; ++i) out.push_back({view(entry(2 * i)), view(entry(2 * i + 1))});
  return out;
}

std::optional<std::string_view> Object::label(std::string_view key) const noexcept {
  for (std::size_t i = 0; i < label_count_; ++i)
    if (view(entry(2 * i)) == key) return view(entry(2 * i + 1));
  return std::nullopt;
}

std::vector<Object::Entry> Object::annotations() const {
  std::vector<Entry> out;
  out.reserve(annotation_count_);
  const std::size_t first = 2 * std::size_t{label_count_};
  for (std::size_t i = 0; i < annotation_count_; ++i)
    out.push_back({view(entry(first + 2 * i)), view(entry(first + 2 * i + 1))});
  return out;
}

std::optional<std::string_view> Object::annotation(std::string_view key) const noexcept {
  const std::size_t first = 2 * std::size_t{label_count_};
  for (std::size_t i = 0; i < annotation_count_; ++i)
    if (view(entry(first + 2 * i)) == key) return view(entry(first + 2 * i + 1));
  return std::nullopt;
}

std::vector<Object::OwnerReference> Object::owner_references() const {
  std::vector<OwnerReference> out;
  out.reserve(owner_count_);
  const auto* flags = reinterpret_cast<const unsigned char*>(bytes() + owner_flags_offset());
  for (std::size_t i = 0; i < owner_count_; ++i) {
    const std::size_t first = owner_span(i);
    out.push_back({view(span(first)), view(span(first + 1)), view(span(first + 2)), view(span(first + 3)),
                   (flags[i] & owner_controller) != 0, (flags[i] & owner_blocks_deletion) != 0});
  }
  return out;
}

std::size_t Object::owned_bytes() const noexcept {
  return owner_flags_offset() + owner_count_;
}

Result<std::string> Object::field(std::string_view path) const {
  // On-Demand needs padding past the end; the stored bytes have none, so parse a
  // padded thread-local copy (a memcpy, cheaper than keeping 64 spare bytes per object).
  thread_local std::string scratch;
  const std::string_view text = json();
  scratch.assign(text.data(), text.size());
  scratch.reserve(text.size() + sj::SIMDJSON_PADDING);
  od::document doc;
  if (auto e = thread_parser().iterate(scratch).get(doc))
    return Error{Errc::decode_failed, std::string("stored object does not parse: ") + sj::error_message(e)};

  od::value current;
  if (auto e = doc.get_value().get(current))
    return Error{Errc::decode_failed, std::string("stored object does not parse: ") + sj::error_message(e)};
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t dot = path.find('.', start);
    std::string_view step = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    od::object obj;
    if (current.get_object().get(obj) != sj::SUCCESS)
      return Error{Errc::missing_field, std::string(path.substr(0, start)) + " is not an object"};
    od::value next;
    if (obj.find_field_unordered(step).get(next) != sj::SUCCESS)
      return Error{Errc::missing_field, std::string(path) + ": no field '" + std::string(step) + "'"};
    current = next;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  od::json_type type;
  if (auto e = current.type().get(type)) return Error{Errc::decode_failed, sj::error_message(e)};
  std::string_view out;
  sj::error_code e = sj::SUCCESS;
  switch (type) {
    case od::json_type::string: e = current.get_string().get(out); break;
    case od::json_type::object: {
      od::object o;
      e = current.get_object().get(o);
      if (!e) e = o.raw_json().get(out);
      break;
    }
    case od::json_type::array: {
      od::array a;
      e = current.get_array().get(a);
      if (!e) e = a.raw_json().get(out);
      break;
    }
    default: {
      out = current.raw_json_token();
      while (!out.empty() && (out.back() == ' ' || out.back() == '\n' || out.back() == '\r' || out.back() == '\t'))
        out.remove_suffix(1);
      break;
    }
  }
  if (e) return Error{Errc::decode_failed, std::string(path) + ": " + sj::error_message(e)};
  return std::string(out);
}

}  // namespace kinformer
