// The whole text of a file, for tests that check logs, reports and records; "" when the file
// cannot be read, so that the test's own checks on the content fail and show it.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fp8lab::testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace fp8lab::testing
