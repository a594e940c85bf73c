#include "recipes/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "recipes/error.hpp"

namespace fp8lab::recipes {

std::optional<std::size_t> invalid_utf8_offset(std::string_view text) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead == 0xe0) low = 0xa0;   // overlong
      if (lead == 0xed) high = 0x9f;  // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead == 0xf0) low = 0x90;   // overlong
      if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
    } else {
      return i;
    }
    // A sequence cut short or with a bad continuation: its first byte is the one named.
    for (std::size_t k = 1; k < length; ++k) {
      if (i + k >= text.size()) return i;
      const unsigned char c = byte(i + k);
      if (k == 1 ? (c < low || c > high) : (c < 0x80 || c > 0xbf)) return i;
    }
    i += length;
  }
  return std::nullopt;
}

void require_utf8(std::string_view text, const std::string& file, const std::string& what) {
  const auto offset = invalid_utf8_offset(text);
  if (!offset) return;
  const auto before = text.substr(0, *offset);
  // A one-line text (a variable's value, a file name) has no line to name.
  const int line = text.find('\n') == std::string_view::npos
                       ? 0
                       : static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
  const auto line_start = before.rfind('\n');
  const std::size_t column = *offset - (line_start == std::string_view::npos ? 0 : line_start + 1);
  throw RecipeError(
      {file, line}, what, fmt::format("0x{:02x}", static_cast<unsigned char>(text[*offset])),
      fmt::format("not UTF-8 at byte offset {} (byte {} of the line)", *offset, column + 1),
      "UTF-8 text (run records keep the text, and JSON holds UTF-8 only)");
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // U+0080..U+009F
      out += fmt::format("\\u{:04x}", next);
      ++i;
    } else if (c < 0x20 || c == 0x7f ||
               (c >= 0x80 && invalid_utf8_offset(text.substr(i, 4)) == std::size_t{0})) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace fp8lab::recipes
