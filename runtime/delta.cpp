#include "runtime/delta.hpp"

namespace kinformer {

std::string_view to_string(DeltaType type) noexcept {
  switch (type) {
    case DeltaType::added: return "added";
    case DeltaType::updated: return "updated";
    case DeltaType::deleted: return "deleted";
    case DeltaType::replaced: return "replaced";
    case DeltaType::sync: return "sync";
  }
  return "unknown";
}

}  // namespace kinformer
