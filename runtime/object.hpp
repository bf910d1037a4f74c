// runtime/object.hpp
//
// Object: one Kubernetes API object, immutable once built and shared as
// ObjectPtr = std::shared_ptr<const Object> by the FIFO, the Indexer and every
// handler (architecture.md §3; deps-notes.md §1).
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
// Threading: immutable; any thread may read it concurrently.
// Errors: parse() reports malformed or incomplete JSON as Errc::decode_failed and a
//   missing metadata.name as Errc::missing_field, naming the reason and byte offset.
//   Never throws (beyond std::bad_alloc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/result.hpp"

namespace kinformer {

class Object;
using ObjectPtr = std::shared_ptr<const Object>;

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
  std::string_view json() const noexcept { return {bytes_.get(), json_size_}; }

  std::string_view api_version() const noexcept { return view(api_version_); }
  std::string_view kind() const noexcept { return view(kind_); }
  std::string_view name() const noexcept { return view(name_); }
  std::string_view generate_name() const noexcept { return view(generate_name_); }
  /// Empty for cluster-scoped objects.
  std::string_view namespace_() const noexcept { return view(ns_); }
  std::string_view uid() const noexcept { return view(uid_); }
  /// Opaque: compare only for equality (informer-semantics.md §7.3).
  std::string_view resource_version() const noexcept { return view(resource_version_); }
  std::int64_t generation() const noexcept { return generation_; }
  std::string_view creation_timestamp() const noexcept { return view(creation_timestamp_); }
  /// Non-empty while deletion is pending.
  std::string_view deletion_timestamp() const noexcept { return view(deletion_timestamp_); }
  /// "namespace/name", or "name" when cluster-scoped.
  std::string_view key() const noexcept { return view(key_); }

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
  /// memory accounting. Excludes the shared_ptr control block.
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
  explicit Object(const Parts& parts);
  ~Object();
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

 private:
  std::string_view view(Span s) const noexcept { return {bytes_.get() + s.offset, s.size}; }

  struct FreeBytes {
    void operator()(char* p) const noexcept;
  };
  const Span* entries() const noexcept { return reinterpret_cast<const Span*>(bytes_.get() + spans_offset_); }
  const OwnerSpans* owners() const noexcept {
    return reinterpret_cast<const OwnerSpans*>(bytes_.get() + owners_offset_);
  }

  // One allocation: the JSON bytes, the unescaped metadata strings and the key,
  // then the label/annotation spans (labels first, 2 spans per entry) and the
  // owner references.
  std::unique_ptr<char, FreeBytes> bytes_;
  // The JSON starts the block; its size is all an Object keeps of it, and the
  // block's size is where the owner spans end (owned_bytes()). 8 B less per
  // object than a span and a size: 120 B, so that it and the shared_ptr's
  // control block fit a 144-B malloc chunk instead of 160 (2.4 MB of a
  // 150k-pod cache).
  std::uint32_t json_size_ = 0;
  Span api_version_, kind_, name_, generate_name_, ns_, uid_, resource_version_,
      creation_timestamp_, deletion_timestamp_, key_;
  std::int64_t generation_ = 0;
  std::uint32_t spans_offset_ = 0;
  std::uint32_t owners_offset_ = 0;
  std::uint16_t label_count_ = 0;
  std::uint16_t annotation_count_ = 0;
  std::uint16_t owner_count_ = 0;
};

}  // namespace kinformer
