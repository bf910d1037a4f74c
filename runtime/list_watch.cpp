#include "runtime/list_watch.hpp"

#include <cctype>
#include <string_view>

namespace kinformer {

namespace {
constexpr std::string_view retry_after_text = "retry after ";
}  // namespace

Error too_many_requests(std::chrono::seconds retry_after) {
  return Error{Errc::too_many_requests,
               "too many requests, " + std::string(retry_after_text) + std::to_string(retry_after.count()) + "s"};
}

std::optional<std::chrono::seconds> retry_after(const Error& error) {
  if (error.code != Errc::too_many_requests) return std::nullopt;
  const auto at = error.message.find(retry_after_text);
  if (at == std::string::npos) return std::nullopt;
  std::int64_t seconds = 0;
  bool any = false;
  for (auto i = at + retry_after_text.size(); i < error.message.size(); ++i) {
    const char c = error.message[i];
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    seconds = seconds * 10 + (c - '0');
    any = true;
  }
  if (!any) return std::nullopt;
  return std::chrono::seconds(seconds);
}

}  // namespace kinformer
