// runtime/key.hpp
//
// Object keys as client-go's MetaNamespaceKeyFunc and SplitMetaNamespaceKey make
// them (informer-semantics.md §2.1): "namespace/name", or "name" when the object
// is cluster-scoped. The UID is not part of the identity.
// Threading: pure functions. Errors: split_key() on a key with more than one '/'.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "runtime/result.hpp"

namespace kinformer {

/// "ns/name", or "name" when `ns` is empty.
std::string make_key(std::string_view ns, std::string_view name);

/// (namespace, name) of a key: "a" -> ("", "a"), "ns/a" -> ("ns", "a");
/// Errc::invalid_key for "a/b/c".
[[nodiscard]] Result<std::pair<std::string_view, std::string_view>> split_key(std::string_view key);

}  // namespace kinformer
