// apiserver/printer_cells.hpp
//
// The cell text kube-apiserver's printers share (apiserver/builtin_printers.hpp,
// apiserver/table_printer.hpp) and the scale subresource's selector
// (apiserver/scale_subresource.hpp): ages as kubectl rounds them, label selectors
// as text, and safe reads of a JSON object's fields (issue 32).
//
// Contract
//   * Nothing here throws on unexpected JSON: a path through a missing member or a
//     value of another type reads as absent ("", 0, false, an empty list).
//   * Timestamps are RFC 3339 (fractions and offsets accepted); years outside
//     1900..2200, which the clock's 64-bit nanoseconds cannot hold, read as absent.
// Threading: pure functions.
// Errors: none.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kinformer::apiserver {

using TableClock = std::chrono::system_clock;

/// kubectl's rounding of an age (apimachinery duration.HumanDuration): "45s",
/// "3m12s", "25m", "5h10m", "2d3h", "400d", "3y20d"; "<invalid>" for the future.
std::string human_duration(std::chrono::seconds elapsed);

/// The time since an RFC 3339 timestamp as human_duration(); "<unknown>" when it is
/// absent or does not parse.
std::string age_of(const nlohmann::json& timestamp, TableClock::time_point now);

/// A metav1.LabelSelector ({matchLabels, matchExpressions}) as selector text, as
/// LabelSelectorAsSelector().String() writes it: requirements sorted by key, set
/// values sorted ("app=web,tier in (a,b)"); "" when it is empty or absent.
std::string label_selector_text(const nlohmann::json& selector);

/// The readers the printers use on objects that may not have the expected shape.
namespace printer_cells {

using Path = std::initializer_list<const char*>;

/// The value at `path`, or a null that lives forever.
const nlohmann::json& at(const nlohmann::json& object, Path path);
std::string text(const nlohmann::json& object, Path path);          // a string, else ""
std::int64_t integer(const nlohmann::json& object, Path path);      // a number, else 0
std::size_t count(const nlohmann::json& object, Path path);         // an object's or list's size, else 0
bool flag(const nlohmann::json& object, Path path);                 // true only for true
const nlohmann::json& items(const nlohmann::json& object, Path path);  // a list, else an empty one
std::string or_none(std::string s);                                 // "" -> "<none>"
std::string joined(const std::vector<std::string>& parts, const char* separator = ",");
std::optional<TableClock::time_point> parse_time(const nlohmann::json& timestamp);
/// A label map as "app=web,tier=db", sorted by key; "<none>" when empty (labels.FormatLabels).
std::string format_labels(const nlohmann::json& labels);

}  // namespace printer_cells

}  // namespace kinformer::apiserver
