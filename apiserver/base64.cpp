#include "apiserver/base64.hpp"

namespace kinformer::apiserver {

namespace {
const char* const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool in_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// The 6-bit value of each character; 64 for a character outside the alphabet.
struct DecodeTable {
  unsigned char value[256];
  DecodeTable() {
    for (auto& v : value) v = 64;
    for (unsigned char i = 0; i < 64; ++i) value[static_cast<unsigned char>(alphabet[i])] = i;
  }
};
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

std::optional<std::string> base64_decode(std::string_view text) {
  static const DecodeTable table;
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  const std::size_t digits = text.size() - padding;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  unsigned bits = 0;
  int held = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const unsigned v = table.value[static_cast<unsigned char>(text[i])];
    if (v == 64) return std::nullopt;
    bits = (bits << 6) | v;
    held += 6;
    if (held >= 8) {
      held -= 8;
      out += static_cast<char>((bits >> held) & 0xff);
    }
  }
  return out;
}

}  // namespace kinformer::apiserver
