#include "apiserver/watch_filter.hpp"

#include <algorithm>

#include "apiserver/watch_encoder.hpp"

namespace kinformer::apiserver {

ApiResult<ObjectFilter> ObjectFilter::parse(const ResourceType& type, std::string namespace_name,
                                            std::string_view label_selector, std::string_view field_selector) {
  auto labels = LabelSelector::parse(label_selector);
  if (!labels) return ApiError::bad_request("unable to parse requirement: " + labels.error().message);
  auto fields = FieldSelector::parse(field_selector);
  if (!fields) return ApiError::bad_request("invalid field selector: " + fields.error().message);
  for (const auto& path : fields->fields()) {
    bool supported = path == "metadata.name" || (type.namespaced && path == "metadata.namespace") ||
                     std::find(type.selectable_fields.begin(), type.selectable_fields.end(), path) !=
                         type.selectable_fields.end();
    if (!supported) return ApiError::bad_request("field label not supported: " + path);
  }
  return ObjectFilter(&type, std::move(namespace_name), std::move(labels).value(), std::move(fields).value());
}

bool ObjectFilter::matches(const StoredObject& object) const {
  if (object.type != type_) return false;
  if (!namespace_.empty() && object.namespace_name != namespace_) return false;
  if (!labels_.empty() && !labels_.matches(object.labels)) return false;
  if (!fields_.empty() &&
      !fields_.matches([&](std::string_view path) -> std::optional<std::string> {
        auto it = object.fields.find(std::string(path));
        if (it == object.fields.end()) return std::nullopt;
        return it->second;
      }))
    return false;
  return true;
}

SeenAs seen_as(const StoreEvent& event, const ObjectFilter& filter) {
  if (event.object->type != &filter.type()) return SeenAs::nothing;
  if (!filter.has_selectors()) return filter.matches(*event.object) ? SeenAs::the_event : SeenAs::nothing;
  bool now = filter.matches(*event.object);
  if (event.type != EventType::modified) return now ? SeenAs::the_event : SeenAs::nothing;
  bool before = event.previous && filter.matches(*event.previous);
  if (now && before) return SeenAs::the_event;
  if (now) return SeenAs::added;
  if (before) return SeenAs::deleted_previous;
  return SeenAs::nothing;
}

const std::string* line_for(const StoreEvent& event, const ObjectFilter& filter,
                            std::deque<std::string>& scratch) {
  switch (seen_as(event, filter)) {
    case SeenAs::nothing:
      return nullptr;
    case SeenAs::the_event:
      return &event.line;
    case SeenAs::added:
      scratch.push_back(event_line(LineType::added, event.object->json));
      return &scratch.back();
    case SeenAs::deleted_previous:
      scratch.push_back(
          event_line(LineType::deleted, object_at_revision(event.previous->json, event.resource_version)));
      return &scratch.back();
  }
  return nullptr;
}

}  // namespace kinformer::apiserver
