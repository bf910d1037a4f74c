// runtime/object.hpp
//
// Object: one Kubernetes API object, immutable once built and shared through
// ObjectPtr, a counted reference, by the FIFO, the Indexer and every handler
// (architecture.md §3; deps-notes.md §1).
//
// Contract
//   * Keeps the raw JSON bytes and the parsed TypeMeta and ObjectMeta. Metadata
//     strings are views into those bytes (JSON-unescaped copies are appended after
//     them only when a string has escapes), so an Object costs its JSON size plus a
//     small fixed part: no DOM is ever kept.
//   * The body (spec, status, ...) is parsed lazily, on each field() call.
//   * A JSON null or an absent field reads as "" (or 0, or empty lists).
//   * key() is client-go's MetaNamespaceKeyFunc: "namespace/name", or "name" for a
//     cluster-scoped object.
//   * An Object lives in one allocation with its bytes and its reference count,
//     and exists only behind an ObjectPtr: it is freed when the last ObjectPtr to
//     it goes. ObjectPtr works as std::shared_ptr<const Object> did (copy, move,
//     ->, *, get(), bool, ==, reset(), use_count()) in 8 B instead of 16: a cache
//     holds one per object in each of its tables. Why not shared_ptr: its control
//     block, the Object's pointer to its bytes and the second allocation cost 48 B
//     per object, and its 16-B pointer 8 B more per table slot (README's sixth
//     pass: 14 MB of a 150k-pod cache).
// Threading: immutable; any thread may read it concurrently. Copying and dropping
//   ObjectPtrs to one Object from many threads is safe (an atomic count); one
//   ObjectPtr variable is not, as with shared_ptr.
// Errors: parse() reports malformed or incomplete JSON as Errc::decode_failed and a
//   missing metadata.name as Errc::missing_field, naming the reason and byte offset.
//   Never throws (beyond std::bad_alloc).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/result.hpp"

namespace kinformer {

class Object;

namespace detail {

// Set bits of a 16-bit mask (Object's metadata presence mask). Not
// __builtin_popcount: for baseline x86-64 (no -mpopcnt) that is a call through the
// PLT to libgcc's __popcountdi2, and Object::key() runs it on every hash-table
// probe that matches a mark.
constexpr std::size_t count_bits(std::uint32_t mask) noexcept {
  mask = mask - ((mask >> 1) & 0x5555u);
  mask = (mask & 0x3333u) + ((mask >> 2) & 0x3333u);
  mask = (mask + (mask >> 4)) & 0x0F0Fu;
  return (mask + (mask >> 8)) & 0x1Fu;
}
static_assert(count_bits(0) == 0 && count_bits(0xFFFF) == 16 && count_bits(0x8421) == 4 && count_bits(0x0300) == 2);

}  // namespace detail

/// A counted reference to an immutable Object (null by default).
class ObjectPtr {
 public:
  constexpr ObjectPtr() noexcept = default;
  constexpr ObjectPtr(std::nullptr_t) noexcept {}  // NOLINT: implicit, as shared_ptr's
  ObjectPtr(const ObjectPtr& other) noexcept;
  ObjectPtr(ObjectPtr&& other) noexcept : object_(other.object_) { other.object_ = nullptr; }
  ObjectPtr& operator=(const ObjectPtr& other) noexcept;
  ObjectPtr& operator=(ObjectPtr&& other) noexcept;
  ~ObjectPtr();

  const Object* get() const noexcept { return object_; }
  const Object& operator*() const noexcept { return *object_; }
  const Object* operator->() const noexcept { return object_; }
  explicit operator bool() const noexcept { return object_ != nullptr; }
  void reset() noexcept { ObjectPtr().swap(*this); }
  void swap(ObjectPtr& other) noexcept { std::swap(object_, other.object_); }
  /// How many ObjectPtrs share the object (0 when null); a snapshot, as shared_ptr's.
  long use_count() const noexcept;

  /// A new reference to `object`, which something else keeps alive meanwhile.
  static ObjectPtr share(const Object& object) noexcept;
  /// Takes over the reference that release() gave up.
  static ObjectPtr adopt(const Object* released) noexcept { return ObjectPtr(released); }
  /// Gives up this reference without dropping it (for a holder that is not an
  /// ObjectPtr, such as an atomic pointer); adopt() takes it back.
  [[nodiscard]] const Object* release() noexcept { return std::exchange(object_, nullptr); }

  friend bool operator==(const ObjectPtr& a, const ObjectPtr& b) noexcept { return a.object_ == b.object_; }
  friend bool operator!=(const ObjectPtr& a, const ObjectPtr& b) noexcept { return a.object_ != b.object_; }
  friend bool operator==(const ObjectPtr& a, std::nullptr_t) noexcept { return a.object_ == nullptr; }
  friend bool operator!=(const ObjectPtr& a, std::nullptr_t) noexcept { return a.object_ != nullptr; }
  friend bool operator==(std::nullptr_t, const ObjectPtr& a) noexcept { return a.object_ == nullptr; }
  friend bool operator!=(std::nullptr_t, const ObjectPtr& a) noexcept { return a.object_ != nullptr; }
  /// By address, for sorting and ordered containers.
  friend bool operator<(const ObjectPtr& a, const ObjectPtr& b) noexcept {
    return std::less<const Object*>{}(a.object_, b.object_);
  }

 private:
  explicit ObjectPtr(const Object* counted) noexcept : object_(counted) {}
  const Object* object_ = nullptr;
};

class Object {
 public:
  /// A (key, value) pair of labels or annotations, as views into the Object.
  struct Entry {
    std::string_view key;
    std::string_view value;
  };

  struct OwnerReference {
    std::string_view api_version;
    std::string_view kind;
    std::string_view name;
    std::string_view uid;
    bool controller = false;
    bool block_owner_deletion = false;
  };

  /// Parses `json` (one API object) and copies its bytes; `json` may be freed after.
  [[nodiscard]] static Result<ObjectPtr> parse(std::string_view json);

  /// The JSON bytes exactly as received.
  std::string_view json() const noexcept { return {bytes(), json_size_}; }

  std::string_view api_version() const noexcept { return meta(MetaField::api_version); }
  std::string_view kind() const noexcept { return meta(MetaField::kind); }
  std::string_view name() const noexcept { return meta(MetaField::name); }
  std::string_view generate_name() const noexcept { return meta(MetaField::generate_name); }
  /// Empty for cluster-scoped objects.
  std::string_view namespace_() const noexcept { return meta(MetaField::namespace_); }
  std::string_view uid() const noexcept { return meta(MetaField::uid); }
  /// Opaque: compare only for equality (informer-semantics.md §7.3).
  std::string_view resource_version() const noexcept { return meta(MetaField::resource_version); }
  std::int64_t generation() const noexcept { return generation_; }
  std::string_view creation_timestamp() const noexcept { return meta(MetaField::creation_timestamp); }
  /// Non-empty while deletion is pending.
  std::string_view deletion_timestamp() const noexcept { return meta(MetaField::deletion_timestamp); }
  /// "namespace/name", or "name" when cluster-scoped.
  std::string_view key() const noexcept { return meta(MetaField::key); }

  /// Labels in document order.
  std::vector<Entry> labels() const;
  std::optional<std::string_view> label(std::string_view key) const noexcept;
  std::size_t label_count() const noexcept { return label_count_; }
  /// Annotations in document order.
  std::vector<Entry> annotations() const;
  std::optional<std::string_view> annotation(std::string_view key) const noexcept;
  std::vector<OwnerReference> owner_references() const;

  /// The value at a dotted path such as "spec.nodeName" or "metadata.labels.app":
  /// a string value unescaped, any other value as its JSON text ("3", "true",
  /// "{...}"). Errc::missing_field when a step of the path is absent or not an
  /// object; Errc::decode_failed if the stored bytes do not parse (cannot happen
  /// for an Object built by parse()).
  [[nodiscard]] Result<std::string> field(std::string_view path) const;

  /// Bytes of heap this object owns (JSON, unescaped strings, entry spans), for
  /// memory accounting. Excludes the fixed part (sizeof(Object)) it is allocated with.
  std::size_t owned_bytes() const noexcept;

  // -- construction details; use parse() --
  struct Span {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
  };
  struct OwnerSpans {
    Span api_version, kind, name, uid;
    bool controller = false;
    bool block_owner_deletion = false;
  };
  struct Parts;  // everything parse() extracted; defined in object.cpp
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

 private:
  friend class ObjectPtr;
  explicit Object(const Parts& parts);  // in the block parse() allocates, before the bytes
  ~Object() = default;
  /// Drops a reference; the last one destroys and frees the object.
  void unref() const noexcept;

  // The metadata strings an Object keeps a span for, in the order of their spans.
  enum class MetaField : std::uint16_t {
    api_version, kind, name, generate_name, namespace_, uid, resource_version, creation_timestamp,
    deletion_timestamp, key, count
  };

  // The bytes follow the Object in its allocation: the JSON, the unescaped
  // metadata strings and the key, then (4-B aligned) one span per non-empty
  // metadata string in MetaField order, the label/annotation spans (labels
  // first, 2 spans per entry), 4 spans per owner reference, and a flags byte per
  // owner reference. Keeping only the non-empty metadata spans saves 32 B of a
  // list's Pod (which has no apiVersion, kind, generateName or deletionTimestamp)
  // against 10 in the Object. A span is two 16-bit halves when the text (JSON,
  // unescaped strings and key) fits in 64 KiB, as almost every object's does,
  // else two 32-bit ones (wide_spans_): 4 B per span less, 56 B of a listed
  // 1-KB Pod, 8.4 MB of a 150k-pod cache (README's seventh pass).
  const char* bytes() const noexcept { return reinterpret_cast<const char*>(this + 1); }
  std::string_view view(Span s) const noexcept { return {bytes() + s.offset, s.size}; }
  std::size_t span_width() const noexcept { return wide_spans_ ? sizeof(Span) : 2 * sizeof(std::uint16_t); }
  /// Span `i` of the span area (metadata, then entries, then owners).
  Span span(std::size_t i) const noexcept {
    const char* at = bytes() + spans_offset_ + i * span_width();
    if (wide_spans_) {
      Span s;
      std::memcpy(&s, at, sizeof s);
      return s;
    }
    std::uint16_t half[2];
    std::memcpy(half, at, sizeof half);
    return {half[0], half[1]};
  }
  std::size_t meta_count() const noexcept { return detail::count_bits(present_); }
  std::string_view meta(MetaField field) const noexcept {
    const auto bit = static_cast<std::uint16_t>(1u << static_cast<unsigned>(field));
    if (!(present_ & bit)) return {};
    return view(span(detail::count_bits(present_ & (bit - 1u))));
  }
  /// Span `i` of the label spans followed by the annotation spans.
  Span entry(std::size_t i) const noexcept { return span(meta_count() + i); }
  std::size_t owner_span(std::size_t owner) const noexcept {
    return meta_count() + 2 * (std::size_t{label_count_} + annotation_count_) + 4 * owner;
  }
  // An owner reference's flags byte: controller, blockOwnerDeletion.
  static constexpr unsigned owner_controller = 1, owner_blocks_deletion = 2;
  std::size_t owner_flags_offset() const noexcept { return spans_offset_ + owner_span(owner_count_) * span_width(); }

  mutable std::atomic<std::uint32_t> refs_{1};
  // The JSON starts the bytes; its size is all an Object keeps of it, and the
  // bytes' size is where the owner spans end (owned_bytes()).
  std::uint32_t json_size_ = 0;
  std::int64_t generation_ = 0;
  std::uint32_t spans_offset_ = 0;  // where the metadata spans start
  std::uint16_t present_ = 0;       // bit MetaField: that string is non-empty and has a span
  std::uint16_t label_count_ = 0;
  std::uint16_t annotation_count_ = 0;
  std::uint16_t owner_count_ = 0;
  bool wide_spans_ = false;  // spans are 2 x 32 bits (the text passes 64 KiB), else 2 x 16
};

inline ObjectPtr::ObjectPtr(const ObjectPtr& other) noexcept : object_(other.object_) {
  if (object_) object_->refs_.fetch_add(1, std::memory_order_relaxed);
}

inline ObjectPtr& ObjectPtr::operator=(const ObjectPtr& other) noexcept {
  ObjectPtr(other).swap(*this);
  return *this;
}

inline ObjectPtr& ObjectPtr::operator=(ObjectPtr&& other) noexcept {
  ObjectPtr(std::move(other)).swap(*this);
  return *this;
}

inline ObjectPtr::~ObjectPtr() {
  if (object_) object_->unref();
}

inline long ObjectPtr::use_count() const noexcept {
  return object_ ? static_cast<long>(object_->refs_.load(std::memory_order_relaxed)) : 0;
}

inline ObjectPtr ObjectPtr::share(const Object& object) noexcept {
  object.refs_.fetch_add(1, std::memory_order_relaxed);
  return ObjectPtr(&object);
}

}  // namespace kinformer

/// By address, as std::hash<std::shared_ptr> does.
template <>
struct std::hash<kinformer::ObjectPtr> {
  std::size_t operator()(const kinformer::ObjectPtr& p) const noexcept { return std::hash<const kinformer::Object*>{}(p.get()); }
};
