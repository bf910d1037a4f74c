#include "actors/predicates.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "runtime/selector.hpp"

namespace kinformer::actors {
namespace {

/// The object a predicate looks at: new state, final state, or a tombstone's last known one.
const Object* subject(const Notification& n) {
  if (n.object) return n.object.get();
  if (n.tombstone && n.tombstone->last_known) return n.tombstone->last_known.get();
  return nullptr;
}

bool is_update(const Notification& n) {
  return n.type == NotificationType::updated && n.old_object && n.object;
}

}  // namespace

Predicate operator&&(Predicate a, Predicate b) {
  return [a = std::move(a), b = std::move(b)](const Notification& n) { return a(n) && b(n); };
}

Predicate operator||(Predicate a, Predicate b) {
  return [a = std::move(a), b = std::move(b)](const Notification& n) { return a(n) || b(n); };
}

Predicate operator!(Predicate a) {
  return [a = std::move(a)](const Notification& n) { return !a(n); };
}

Predicate all_of(std::initializer_list<Predicate> predicates) {
  std::vector<Predicate> all(predicates);
  return [all = std::move(all)](const Notification& n) {
    return std::all_of(all.begin(), all.end(), [&](const Predicate& p) { return p(n); });
  };
}

Predicate any_of(std::initializer_list<Predicate> predicates) {
  std::vector<Predicate> any(predicates);
  return [any = std::move(any)](const Notification& n) {
    return std::any_of(any.begin(), any.end(), [&](const Predicate& p) { return p(n); });
  };
}

Predicate in_namespace(std::string ns) {
  return [ns = std::move(ns)](const Notification& n) {
    auto key = n.key();
    auto slash = key.find('/');
    auto key_ns = slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
    return key_ns == ns;
  };
}

namespace {

/// A predicate over a parsed runtime selector (LabelSelector or FieldSelector).
template <class Selector>
Result<Predicate> matching(std::string_view text) {
  auto parsed = Selector::parse(text);
  if (!parsed) return parsed.error();
  auto shared = std::make_shared<const Selector>(std::move(parsed).value());
  return Predicate([shared](const Notification& n) {
    const auto* object = subject(n);
    return object != nullptr && shared->matches(*object);
  });
}

}  // namespace

Result<Predicate> matching_labels(std::string_view selector) { return matching<LabelSelector>(selector); }

Result<Predicate> matching_fields(std::string_view selector) { return matching<FieldSelector>(selector); }

Predicate of_type(std::initializer_list<NotificationType> types) {
  std::vector<NotificationType> wanted(types);
  return [wanted = std::move(wanted)](const Notification& n) {
    return std::find(wanted.begin(), wanted.end(), n.type) != wanted.end();
  };
}

Predicate field_equals(std::string path, std::string value) {
  return [path = std::move(path), value = std::move(value)](const Notification& n) {
    const auto* object = subject(n);
    if (object == nullptr) return false;
    auto field = object->field(path);
    return field && field.value() == value;
  };
}

Predicate generation_changed() {
  return [](const Notification& n) {
    return !is_update(n) || n.old_object->generation() != n.object->generation();
  };
}

Predicate resource_version_changed() {
  return [](const Notification& n) {
    return !is_update(n) || n.old_object->resource_version() != n.object->resource_version();
  };
}

Predicate annotation_changed(std::string name) {
  return [name = std::move(name)](const Notification& n) {
    return !is_update(n) || n.old_object->annotation(name) != n.object->annotation(name);
  };
}

std::uint64_t stable_key_hash(std::string_view key) noexcept {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : key) {
    hash ^= c;
    hash *= 1099511628211ull;  // FNV-1a 64 prime
  }
  return hash;
}

Predicate canary(double percent) {
  auto threshold = static_cast<std::uint64_t>(std::clamp(percent, 0.0, 100.0) * 100.0);
  return [threshold](const Notification& n) { return stable_key_hash(n.key()) % 10000 < threshold; };
}

}  // namespace kinformer::actors
