#include "recipes/explain.hpp"

#include "recipes/accelerate.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/recipe_file.hpp"

namespace fp8lab::recipes {

std::string explain_text(const std::string& text, const std::string& file) {
  if (looks_like_accelerate_config(text)) {
    return format_compatibility(compatibility(parse_accelerate_config_text(text, file)),
                                "accelerate config " + file);
  }
  return format_compatibility(compatibility(parse_recipe_text(text, file)),
                              "fp8lab recipe file " + file);
}

std::string explain_environment(const std::map<std::string, std::string>& env) {
  return format_compatibility(compatibility(read_accelerate_env(env)),
                              "accelerate settings from the ACCELERATE_FP8_* environment");
}

std::string explain_file(const std::string& path) {
  return explain_text(read_recipe_text(path), path);
}

}  // namespace fp8lab::recipes
