#include "runtime/http/list_decoder.hpp"

#include <simdjson.h>

namespace kinformer::http {

namespace {

// Parsers at or above this capacity are freed after a list's last page (below).
constexpr std::size_t kept_parser_capacity = 64 * 1024;

Result<ObjectList> decode_with(simdjson::ondemand::parser& parser, std::string_view body,
                               std::size_t padded_capacity) {
  const auto bad = [](std::string what) {
    return Error{Errc::decode_failed, "malformed list response: " + what};
  };
  if (padded_capacity < body.size() + simdjson::SIMDJSON_PADDING)
    return bad("the buffer lacks simdjson's padding");
  simdjson::ondemand::document doc;
  if (auto error = parser.iterate(body.data(), body.size(), padded_capacity).get(doc))
    return bad(simdjson::error_message(error));
  simdjson::ondemand::object list;
  if (auto error = doc.get_object().get(list)) return bad(simdjson::error_message(error));
  ObjectList out;
  bool have_items = false;
  // Fields in document order: kube-apiserver sends metadata before items, but nothing promises it.
  for (auto field : list) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return bad(simdjson::error_message(error));
    if (key == "metadata") {
      simdjson::ondemand::object metadata;
      if (auto error = field.value().get_object().get(metadata))
        return bad("metadata: " + std::string(simdjson::error_message(error)));
      for (auto meta_field : metadata) {
        std::string_view meta_key, text;
        if (auto error = meta_field.unescaped_key().get(meta_key)) return bad(simdjson::error_message(error));
        if (meta_key == "resourceVersion" || meta_key == "continue") {
          if (meta_field.value().get_string().get(text))
            return bad("metadata." + std::string(meta_key) + " is not a string");
          (meta_key == "continue" ? out.continue_token : out.resource_version) = std::string(text);
        }
      }
    } else if (key == "items") {
      have_items = true;
      simdjson::ondemand::value items_value = field.value();
      if (items_value.is_null()) continue;  // "items": null is an empty list
      simdjson::ondemand::array items;
      if (auto error = items_value.get_array().get(items))
        return bad("items: " + std::string(simdjson::error_message(error)));
      std::size_t index = 0;
      for (auto item : items) {
        simdjson::ondemand::object object;
        std::string_view raw;
        if (auto error = item.get_object().get(object))
          return bad("item " + std::to_string(index) + ": " + simdjson::error_message(error));
        if (auto error = object.raw_json().get(raw))
          return bad("item " + std::to_string(index) + ": " + simdjson::error_message(error));
        auto parsed = Object::parse(raw);
        if (!parsed) return bad("item " + std::to_string(index) + ": " + parsed.error().to_string());
        out.items.push_back(std::move(parsed).value());
        ++index;
      }
    }
  }
  if (!have_items) return bad("no \"items\"");
  return out;
}

}  // namespace

Result<ObjectList> decode_list(std::string_view body, std::size_t padded_capacity) {
  thread_local simdjson::ondemand::parser parser;
  Result<ObjectList> out = decode_with(parser, body, padded_capacity);
  // The parser's buffers are ~5.7x the largest page (4 MB for pages of 500 pods of
  // 1.4 KB). Kept for the I/O thread's life, they would sit through the pops that
  // follow the list, where an informer's RSS peaks; one allocation per list is cheap.
  if ((!out || out->continue_token.empty()) && parser.capacity() >= kept_parser_capacity)
    parser = simdjson::ondemand::parser{};
  return out;
}

}  // namespace kinformer::http
