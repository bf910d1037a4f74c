// apiserver/builtin_printers.hpp
//
// The columns kube-apiserver prints for each built-in kind in a Table
// (kubernetes pkg/printers/internalversion, 1.32) and how a stored object becomes
// its row, for `kubectl get` / `get -o wide` / `get -w` (issue 32). The README's
// "Table columns" section lists them.
//
// Contract
//   * builtin_printer() knows pods, services, configmaps, secrets, namespaces, nodes,
//     serviceaccounts, events, endpoints, persistentvolumeclaims, persistentvolumes,
//     replicationcontrollers, deployments, replicasets, statefulsets, daemonsets,
//     jobs, cronjobs, ingresses and leases; nullptr for every other kind (the caller
//     prints kube-apiserver's default Name / Created At).
//   * A row always has one cell per column, the wide (priority 1) ones included, as
//     kube-apiserver sends them; kubectl hides priority-1 columns without -o wide.
//     Cells are JSON strings, integers or booleans; a value the object lacks prints
//     as kube-apiserver prints it ("<none>", "0/1", 0), never fails.
//   * Ages are measured against the `now` given, so a test can fix the clock.
// Threading: pure functions.
// Errors: none; any JSON (even not an object) gives a row.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/printer_cells.hpp"
#include "apiserver/resources.hpp"

namespace kinformer::apiserver {

/// One meta.k8s.io/v1 TableColumnDefinition.
struct TableColumn {
  std::string name;         // "Ready"; kubectl prints it upper-cased
  std::string type;         // "string", "integer", "number", "boolean", "date"
  std::string format;       // "name" for the object's name column, else ""
  std::string description;
  int priority = 0;         // 1: shown only with -o wide
};

struct BuiltinPrinter {
  std::vector<TableColumn> columns;
  /// {"cells":[...]} plus "conditions" where kube-apiserver sets them (finished pods).
  nlohmann::json (*row)(const nlohmann::json& object, TableClock::time_point now);
};

/// The printer of a built-in kind, or nullptr.
const BuiltinPrinter* builtin_printer(const ResourceType& type);

}  // namespace kinformer::apiserver
