// runtime/http/list_decoder.hpp
//
// decode_list: a list response body ({"kind":"PodList","metadata":{..},"items":[..]})
// into an ObjectList (kube-api-protocol.md A4) with simdjson On-Demand: each item's
// raw bytes are cut out and parsed once by Object::parse; no DOM of the list is built.
//
// Contract
//   * metadata.resourceVersion and metadata.continue are copied; items keep order.
//   * `body` must have simdjson::SIMDJSON_PADDING readable bytes past its end
//     (a std::string reserved to size + padding).
//   * Any malformed part (the list or one item) fails the whole list with
//     Errc::decode_failed naming the item index: a partial list would make the
//     Reflector's replace() delete the missing objects.
//   * Memory: one parser per thread, reused across pages; after a list's last page
//     (no continue token) or a failure, a parser grown past 64 KiB is freed.
// Threading: pure; any thread. Errors: Result; never throws.
#pragma once

#include <string>

#include "runtime/list_watch.hpp"
#include "runtime/result.hpp"

namespace kinformer::http {

/// `padded_capacity` = readable bytes from body.data() (>= body.size() + 64).
[[nodiscard]] Result<ObjectList> decode_list(std::string_view body, std::size_t padded_capacity);

}  // namespace kinformer::http
