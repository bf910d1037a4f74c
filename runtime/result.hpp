// runtime/result.hpp
//
// Errc, Error and Result<T>: how runtime/ reports expected failures without
// exceptions and without CAF (style.md §5 "Errors").
//
// Contract
//   * A Result<T> holds either a T or an Error{code, message}; never both.
//   * value() on an error (or error() on a value) is a caller bug: it asserts.
//   * Messages name what failed and where (a byte offset, a field, a key).
// Threading: plain values. Errors: none; never throws.
// Not here: conversion to caf::error (actors/ registers Errc with CAF).
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kinformer {

enum class Errc : std::uint8_t {
  decode_failed = 1,   // malformed or incomplete JSON: skip and count it. Retryable.
  missing_field,       // well-formed JSON without a required field (metadata.name). Retryable.
  invalid_selector,    // a label or field selector that does not parse. Final.
  invalid_key,         // a key with more than one '/'. Final.
  unknown_index,       // an index name that was never added. Final (caller bug).
  index_exists,        // AddIndexers with a name already present. Final.
  fifo_closed,         // the DeltaFIFO was closed: shutting down. Final.
  requeue,             // a pop's process function asks to put the deltas back.
  transform_failed,    // the user's transform rejected an object. Retryable.
  gone,                // 410 Expired: the resourceVersion is too old, relist. Retryable.
  too_large_rv,        // 504 "too large resource version": relist with "". Retryable.
  too_many_requests,   // 429: wait (retry-after) and re-watch. Retryable.
  connection_failed,   // refused or reset: back off and retry. Retryable.
  server_error,        // any other HTTP or Status failure. Retryable.
  stopped,             // the component was stopped. Final.
  backend_unavailable, // an engine not built in, or no device. Final.
  already_started,     // a setting that must come before start (e.g. set_transform). Final.
  unknown_model,       // a forecast names a model the inference actor has not loaded. Final.
  invalid_input,       // a forecast window of the wrong shape or with NaN/Inf. Final.
  overloaded,          // the inference queue is full: back off and retry. Retryable.
  model_failed,        // the backend threw while running a batch. Retryable.
};

/// The enumerator's name, e.g. "decode_failed".
std::string_view to_string(Errc code) noexcept;

struct Error {
  Errc code;
  std::string message;

  /// "decode_failed: unexpected end of input at byte 17"
  std::string to_string() const;
};

/// A T or an Error. Check `if (!r)` before `r.value()`.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT
  Result(Errc code, std::string message) : state_(Error{code, std::move(message)}) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(state_); }
  const T& value() const& { assert(has_value()); return std::get<0>(state_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { assert(!has_value()); return std::get<1>(state_); }
  Error&& error() && { assert(!has_value()); return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

/// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  Result(Errc code, std::string message) : error_{code, std::move(message)}, ok_(false) {}

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const& { assert(!ok_); return error_; }

 private:
  Error error_{Errc::decode_failed, {}};
  bool ok_ = true;
};

}  // namespace kinformer
