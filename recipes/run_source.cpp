#include "recipes/run_source.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "recipes/accelerate.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/recipe_file.hpp"

namespace fp8lab::recipes {

std::string_view name(SourceKind kind) {
  switch (kind) {
    case SourceKind::recipe_file: return "recipe_file";
    case SourceKind::accelerate_config: return "accelerate_config";
    case SourceKind::accelerate_env: return "accelerate_env";
    case SourceKind::settings: return "settings";
  }
  return "settings";
}

RunSource source_from_text(const std::string& text, const std::string& file) {
  RunSource source;
  source.text = text;
  source.site = {file, 0};
  if (looks_like_accelerate_config(text)) {
    source.kind = SourceKind::accelerate_config;
    source.compatibility = compatibility(parse_accelerate_config_text(text, file));
  } else {
    source.kind = SourceKind::recipe_file;
    source.compatibility = compatibility(parse_recipe_text(text, file));
  }
  return source;
}

RunSource read_source_file(const std::string& path) {
  // read_recipe_text refuses a directory or an empty file.
  RunSource source = source_from_text(read_recipe_text(path), path);
  source.path = std::filesystem::absolute(path).lexically_normal().string();
  return source;
}

RunSource settings_source(const std::string& yaml, const std::string& origin) {
  RunSource source;
  source.kind = SourceKind::settings;
  source.text = yaml;
  source.site = {origin, 0};
  source.compatibility = compatibility(parse_recipe_text(yaml, origin));
  return source;
}

RunSource environment_source(const std::map<std::string, std::string>& env) {
  RunSource source;
  source.kind = SourceKind::accelerate_env;
  source.site = {"environment", 0};
  const std::map<std::string, std::string> fp8 = accelerate_fp8_variables(env);
  if (fp8.empty()) {
    throw RecipeError(source.site, "ACCELERATE_FP8_*", "",
                      "no variable is set, so there are no accelerate FP8 settings to run",
                      fmt::format("{}", fmt::join(accelerate_env_variables(), ", ")));
  }
  for (const auto& [var, value] : fp8) source.text += var + "=" + value + "\n";
  source.compatibility = compatibility(read_accelerate_env(fp8));
  return source;
}

}  // namespace fp8lab::recipes
