// apiserver/watch_filter.hpp
//
// ObjectFilter and the watch-event lines one watcher sees (rendered by watch_encoder.hpp) (kube-api-protocol.md
// §A5, §A8): which stored objects a list or watch selects, and how a store event
// becomes that watcher's ADDED/MODIFIED/DELETED line.
//
// Contract
//   * ObjectFilter = namespace ("" = all) AND label selector AND field selector.
//     Field paths must be metadata.name, metadata.namespace (namespaced kinds) or
//     one of the kind's selectable_fields, else 400 "field label not supported".
//   * line_for(): an event of another resource or namespace, or whose object
//     matches neither before nor after, gives nullptr. An update that makes an
//     object start matching is ADDED; one that makes it stop matching is DELETED
//     carrying the previous content with the new resourceVersion.
//   * Every line is one JSON object followed by '\n'.
// Threading: ObjectFilter is immutable after parse(); any thread may use it.
// Errors: parse() returns 400 BadRequest with the selector's parse message.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/storage/store.hpp"
#include "runtime/selector.hpp"

namespace kinformer::apiserver {

class ObjectFilter {
 public:
  static ApiResult<ObjectFilter> parse(const ResourceType& type, std::string namespace_name,
                                       std::string_view label_selector, std::string_view field_selector);

  bool matches(const StoredObject& object) const;
  /// True when a selector narrows the result (remainingItemCount is then unknown).
  bool has_selectors() const { return !labels_.empty() || !fields_.empty(); }
  const ResourceType& type() const { return *type_; }
  const std::string& namespace_name() const { return namespace_; }

 private:
  ObjectFilter(const ResourceType* type, std::string ns, LabelSelector labels, FieldSelector fields)
      : type_(type), namespace_(std::move(ns)), labels_(std::move(labels)), fields_(std::move(fields)) {}

  const ResourceType* type_;
  std::string namespace_;  // "" = every namespace
  LabelSelector labels_;
  FieldSelector fields_;
};

/// How one watcher sees a store event (the rule line_for() renders).
enum class SeenAs : std::uint8_t {
  nothing,           // another resource or namespace, or matching neither before nor after
  the_event,         // the event as stored
  added,             // the object started matching: ADDED with the new content
  deleted_previous,  // it stopped matching: DELETED with the previous content at the event's RV
};
SeenAs seen_as(const StoreEvent& event, const ObjectFilter& filter);

/// The line this watcher must receive for `event`: &event.line itself, a line
/// rendered into `scratch` (kept stable: push_back only), or nullptr.
const std::string* line_for(const StoreEvent& event, const ObjectFilter& filter, std::deque<std::string>& scratch);

}  // namespace kinformer::apiserver
