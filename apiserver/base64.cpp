#include "apiserver/base64.hpp"

namespace kinformer::apiserver {

namespace {
const char* const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool in_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}
}  // namespace

std::string base64_encode(std::string_view raw) {
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < raw.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(raw[i]) << 16) | (static_cast<unsigned char>(raw[i + 1]) << 8) |
                 static_cast<unsigned char>(raw[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63];
  }
  if (i < raw.size()) {
    unsigned v = static_cast<unsigned char>(raw[i]) << 16;
    if (i + 1 < raw.size()) v |= static_cast<unsigned char>(raw[i + 1]) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += i + 1 < raw.size() ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool is_base64(std::string_view text) {
  if (text.size() % 4 != 0) return false;
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  for (std::size_t i = 0; i + padding < text.size(); ++i)
    if (!in_alphabet(text[i])) return false;
  return true;
}

}  // namespace kinformer::apiserver
