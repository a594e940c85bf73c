#include "experiments/runner/text_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fp8lab::experiments {

std::string read_text_file(const std::filesystem::path& path) {
  // An ifstream opens a directory and reads nothing from it: that would pass for an empty file.
  if (std::filesystem::is_directory(path)) {
    throw std::runtime_error(path.string() + " is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace fp8lab::experiments
