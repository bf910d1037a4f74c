#include "apiserver/protobuf_decoder.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "apiserver/base64.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// One protobuf message's fields, read in order.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  struct Field {
    std::uint32_t number = 0;
    std::uint32_t wire_type = 0;
    std::uint64_t varint = 0;     // wire type 0
    std::string_view bytes;       // wire type 2
  };

  /// The next field; nullopt at the end. Sets failed() on malformed input.
  std::optional<Field> next() {
    if (at_ >= bytes_.size() || failed_) return std::nullopt;
    auto key = varint();
    if (!key) return fail();
    Field f;
    f.number = static_cast<std::uint32_t>(*key >> 3);
    f.wire_type = static_cast<std::uint32_t>(*key & 7);
    switch (f.wire_type) {
      case 0: {
        auto v = varint();
        if (!v) return fail();
        f.varint = *v;
        break;
      }
      case 1:
      case 5: {
        std::size_t size = f.wire_type == 1 ? 8 : 4;
        if (bytes_.size() - at_ < size) return fail();
        at_ += size;
        break;
      }
      case 2: {
        auto length = varint();
        if (!length || *length > bytes_.size() - at_) return fail();
        f.bytes = bytes_.substr(at_, static_cast<std::size_t>(*length));
        at_ += static_cast<std::size_t>(*length);
        break;
      }
      default:
        return fail();
    }
    return f;
  }

  bool failed() const { return failed_; }

 private:
  std::optional<Field> fail() {
    failed_ = true;
    return std::nullopt;
  }

  std::optional<std::uint64_t> varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64 && at_ < bytes_.size(); shift += 7) {
      auto byte = static_cast<unsigned char>(bytes_[at_++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    return std::nullopt;
  }

  std::string_view bytes_;
  std::size_t at_ = 0;
  bool failed_ = false;
};

using Fields = std::function<std::optional<ApiError>(const Reader::Field&)>;

ApiError malformed(const std::string& what) { return ApiError::bad_request("malformed protobuf body: " + what); }

ApiError unsupported(const std::string& what) {
  return ApiError{415, "UnsupportedMediaType",
                  "this server decodes protobuf only partially and does not know " + what +
                      "; send the object as JSON or YAML (e.g. kubectl create -f)",
                  {}, {}, {}, {}, {}};
}

// Calls on_field for every field of `bytes`; the first error wins.
std::optional<ApiError> each_field(std::string_view bytes, const std::string& message, const Fields& on_field) {
  Reader reader(bytes);
  while (auto field = reader.next())
    if (auto error = on_field(*field)) return error;
  if (reader.failed()) return malformed("in " + message);
  return std::nullopt;
}

std::optional<ApiError> map_entry(std::string_view bytes, json& into, bool base64_values);

std::optional<ApiError> map_entry(std::string_view bytes, json& into, bool base64_values) {
  std::string key, value;
  auto error = each_field(bytes, "a map entry", [&](const Reader::Field& f) -> std::optional<ApiError> {
    if (f.wire_type != 2) return malformed("map entry field " + std::to_string(f.number));
    if (f.number == 1) key = std::string(f.bytes);
    else if (f.number == 2) value = base64_values ? base64_encode(f.bytes) : std::string(f.bytes);
    return std::nullopt;
  });
  if (error) return error;
  into[key] = value;
  return std::nullopt;
}

std::optional<ApiError> object_meta(std::string_view bytes, json& meta) {
  return each_field(bytes, "ObjectMeta", [&](const Reader::Field& f) -> std::optional<ApiError> {
    auto text = [&](const char* name) -> std::optional<ApiError> {
      if (f.wire_type != 2) return malformed(std::string("ObjectMeta.") + name);
      if (!f.bytes.empty()) meta[name] = std::string(f.bytes);
      return std::nullopt;
    };
    switch (f.number) {
      case 1: return text("name");
      case 2: return text("generateName");
      case 3: return text("namespace");
      case 4: return std::nullopt;  // selfLink: no longer populated
      case 5: return text("uid");
      case 6: return text("resourceVersion");
      case 7:
        if (f.varint) meta["generation"] = static_cast<std::int64_t>(f.varint);
        return std::nullopt;
      case 8: case 9: case 10: return std::nullopt;  // timestamps and grace period are server-owned
      case 11: return map_entry(f.bytes, meta["labels"], false);
      case 12: return map_entry(f.bytes, meta["annotations"], false);
      case 14:
        meta["finalizers"].push_back(std::string(f.bytes));
        return std::nullopt;
      default: return unsupported("ObjectMeta field " + std::to_string(f.number) + " (ownerReferences, managedFields)");
    }
  });
}

ApiResult<json> config_map(std::string_view raw) {
  json object = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", json::object()}};
  auto error = each_field(raw, "ConfigMap", [&](const Reader::Field& f) -> std::optional<ApiError> {
    switch (f.number) {
      case 1: return object_meta(f.bytes, object["metadata"]);
      case 2: return map_entry(f.bytes, object["data"], false);
      case 3: return map_entry(f.bytes, object["binaryData"], true);
      case 4:
        object["immutable"] = f.varint != 0;
        return std::nullopt;
      default: return unsupported("ConfigMap field " + std::to_string(f.number));
    }
  });
  if (error) return *error;
  return object;
}

ApiResult<json> namespace_object(std::string_view raw) {
  json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", json::object()}};
  auto error = each_field(raw, "Namespace", [&](const Reader::Field& f) -> std::optional<ApiError> {
    switch (f.number) {
      case 1: return object_meta(f.bytes, object["metadata"]);
      case 2:
        return each_field(f.bytes, "NamespaceSpec", [&](const Reader::Field& s) -> std::optional<ApiError> {
          if (s.number != 1) return unsupported("NamespaceSpec field " + std::to_string(s.number));
          object["spec"]["finalizers"].push_back(std::string(s.bytes));
          return std::nullopt;
        });
      case 3: return std::nullopt;  // status is server-owned on create
      default: return unsupported("Namespace field " + std::to_string(f.number));
    }
  });
  if (error) return *error;
  return object;
}

}  // namespace

ApiResult<json> decode_protobuf(std::string_view body) {
  static constexpr std::string_view magic("k8s\0", 4);
  if (body.substr(0, 4) != magic) return malformed("it does not start with the k8s envelope prefix");
  std::string api_version, kind;
  std::string_view raw;
  auto error = each_field(body.substr(4), "the envelope", [&](const Reader::Field& f) -> std::optional<ApiError> {
    if (f.number == 1)
      return each_field(f.bytes, "TypeMeta", [&](const Reader::Field& t) -> std::optional<ApiError> {
        if (t.number == 1) api_version = std::string(t.bytes);
        if (t.number == 2) kind = std::string(t.bytes);
        return std::nullopt;
      });
    if (f.number == 2) raw = f.bytes;
    if (f.number == 3 && !f.bytes.empty()) return unsupported("content encoding " + std::string(f.bytes));
    return std::nullopt;
  });
  if (error) return *error;
  if (api_version == "v1" && kind == "ConfigMap") return config_map(raw);
  if (api_version == "v1" && kind == "Namespace") return namespace_object(raw);
  return unsupported("the protobuf encoding of " + (kind.empty() ? std::string("this object") : api_version + " " + kind));
}

}  // namespace kinformer::apiserver
