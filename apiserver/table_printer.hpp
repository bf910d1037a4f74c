// apiserver/table_printer.hpp
//
// Server-side printing: the meta.k8s.io Table kube-apiserver answers when a client
// asks for `application/json;as=Table;v=v1;g=meta.k8s.io` (kubectl get, get -o wide,
// get -w, get all), so kubectl shows each kind's own columns instead of NAME AGE
// (kube-api-protocol.md §A2, §A5; issue 32).
//
// Contract
//   * table_request() reads the Accept header's alternatives in order: the first one
//     that is a Table of meta.k8s.io v1 or v1beta1 wins; one that is plain JSON (or
//     anything else, */* too) first means no Table. includeObject is None, Object or
//     Metadata (the default: each row carries a PartialObjectMetadata); anything else
//     is 400 BadRequest.
//   * The columns: a built-in kind's printer (apiserver/builtin_printers.hpp); a
//     custom resource's Name plus its CRD's additionalPrinterColumns, or Name and Age
//     when it declares none, as kube-apiserver defaults them; CRDs and built-ins
//     without a printer get kube-apiserver's default Name and Created At.
//   * additionalPrinterColumns cells follow the column type: string (the value's
//     text; objects and lists as JSON), integer, number, boolean, date (an age).
//     A path that selects nothing, or a value of another type, is a null cell
//     (kubectl prints <none>); an unparsable jsonPath gives null cells, never an error.
//   * Watches: watch_line() turns one event line into the same event whose object is
//     a Table with that object's row; the first line of a watch carries the column
//     definitions, later ones none (kubectl reuses the last ones it saw). ERROR lines
//     pass unchanged; a BOOKMARK becomes a row-less Table with its resourceVersion.
// Threading: TablePrinter is immutable once built; any thread may use it.
// Errors: only table_request() fails; printing never does (an object that is not
//   JSON prints an empty row rather than failing a list).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/builtin_printers.hpp"
#include "apiserver/json_path.hpp"
#include "apiserver/stored_object.hpp"

namespace kinformer::apiserver {

struct TableRequest {
  std::string version = "v1";  // of meta.k8s.io: "v1" or "v1beta1"
  enum class Include { none, metadata, object } include = Include::metadata;
};

/// The Table the request asks for, or nullopt for plain JSON; 400 for a bad includeObject.
ApiResult<std::optional<TableRequest>> table_request(std::string_view accept, std::string_view include_object);

/// What a list Table's metadata carries (the list's ListMeta).
struct TableListMeta {
  std::uint64_t resource_version = 0;
  std::string continue_token;               // "" = last page
  std::optional<std::size_t> remaining;     // remainingItemCount, when known
};

class TablePrinter {
 public:
  /// `crd_version`: the served version of the custom kind's CRD (apiserver/served_crd.hpp),
  /// nullptr when there is none.
  TablePrinter(const ResourceType& type, const nlohmann::json* crd_version, TableRequest request);

  std::string content_type() const;
  /// A list's Table.
  std::string list(const std::vector<StoredPtr>& items, const TableListMeta& meta,
                   TableClock::time_point now = TableClock::now()) const;
  /// One object's Table (a GET of one name).
  std::string one(const StoredObject& object, TableClock::time_point now = TableClock::now()) const;
  /// A watch event line ({"type":..,"object":..}\n) with its object as a Table; see the
  /// contract. `columns_sent`: whether this watch has sent the column definitions (set here).
  std::string watch_line(std::string_view line, bool& columns_sent, TableClock::time_point now = TableClock::now()) const;

  const std::vector<TableColumn>& columns() const { return columns_; }

 private:
  struct CustomColumn {
    TableColumn definition;
    std::optional<JsonPath> path;  // nullopt: the jsonPath does not parse
  };

  nlohmann::json row(const nlohmann::json& object, TableClock::time_point now) const;
  nlohmann::json table(nlohmann::json rows, nlohmann::json metadata, bool with_columns) const;

  TableRequest request_;
  const BuiltinPrinter* builtin_ = nullptr;
  bool custom_ = false;                   // Name + custom_columns_
  std::vector<CustomColumn> custom_columns_;
  std::vector<TableColumn> columns_;      // what columnDefinitions lists
};

/// The per-watcher rewrite a Table watch applies to every line it sends (WatchPlan::rewrite_line):
/// column definitions on the first event line only.
std::function<std::string(const std::string&)> table_watch_rewriter(std::shared_ptr<const TablePrinter> printer);

}  // namespace kinformer::apiserver
