// One line of a literature experiment's text table (the L1 and L2 tables of docs/literature.md),
// printf-formatted and appended to `out`; the compiler checks the format against the arguments.
// No LibTorch.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

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

}  // namespace fp8lab::experiments::literature
