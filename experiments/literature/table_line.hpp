// The literature experiments' text tables (the L1 and L2 tables of docs/literature.md): lines
// printf-formatted and appended to `out` (the compiler checks the format against the arguments),
// and a table of columns, each of which sets its header and its cells in one place. No LibTorch.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace fp8lab::experiments::literature {

__attribute__((format(printf, 2, 3))) inline void append_line(std::string& out, const char* format,
                                                              ...) {
  char line[200];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  out += line;
}

// printf into a string: the text of one cell.
__attribute__((format(printf, 1, 2))) inline std::string printed(const char* format, ...) {
  char text[100];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  return text;
}

// One column: its header and its cell of a row, both padded to `width` characters (right-aligned;
// a negative width left-aligns, as printf's '-' flag).
template <class Row>
struct TextColumn {
  int width;
  const char* header;
  std::function<std::string(const Row&)> cell;
};

// The header line, then a line per row; columns are separated by one space.
template <class Row>
std::string text_table(const std::vector<TextColumn<Row>>& columns, const std::vector<Row>& rows) {
  std::string out;
  const auto line = [&](const auto& text_of) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      append_line(out, "%s%*s", c == 0 ? "" : " ", columns[c].width, text_of(columns[c]).c_str());
    }
    out += '\n';
  };
  line([](const TextColumn<Row>& c) { return std::string(c.header); });
  for (const Row& row : rows) line([&](const TextColumn<Row>& c) { return c.cell(row); });
  return out;
}

}  // namespace fp8lab::experiments::literature
