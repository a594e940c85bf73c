#include "recipes/text_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "recipes/error.hpp"

namespace fp8lab::recipes {

std::string read_text_file(const std::string& path) {
  // An ifstream opens a directory and reads nothing from it: that would pass for an empty file.
  if (std::filesystem::is_directory(path)) {
    throw RecipeError({path, 0}, "file", path, "is a directory, not", "a YAML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RecipeError({path, 0}, "file", path, "cannot open", "a readable YAML file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace fp8lab::recipes
