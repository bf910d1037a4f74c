#include "runtime/key.hpp"

namespace kinformer {

std::string make_key(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append(1, '/').append(name);
  return key;
}

Result<std::pair<std::string_view, std::string_view>> split_key(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return std::pair{std::string_view{}, key};
  if (key.find('/', slash + 1) != std::string_view::npos)
    return Error{Errc::invalid_key, "unexpected key format: \"" + std::string(key) + "\""};
  return std::pair{key.substr(0, slash), key.substr(slash + 1)};
}

}  // namespace kinformer
