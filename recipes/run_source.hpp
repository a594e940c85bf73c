// Where the settings of one `fp8lab run` come from, read once: the source's kind, path and text
// (the run record's "source", docs/results-schema.md) and what the peer library makes of it
// (compatibility.hpp), from which runs_as.hpp picks the recipe to run.
//
//   fp8lab run --recipe FILE      recipe_file or accelerate_config (told apart as explain does)
//   fp8lab run --set key=value    settings: the YAML the flags became
//   fp8lab run --env              accelerate_env: the ACCELERATE_FP8_* variables
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "recipes/compatibility.hpp"
#include "recipes/error.hpp"

namespace fp8lab::recipes {

enum class SourceKind : std::uint8_t { recipe_file, accelerate_config, accelerate_env, settings };

// "recipe_file", "accelerate_config", "accelerate_env", "settings".
std::string_view name(SourceKind kind);

struct RunSource {
  SourceKind kind = SourceKind::settings;
  std::string path;  // absolute; empty for --set and the environment
  std::string text;  // the file's text; the YAML of --set; "NAME=value" lines of the environment
  Site site;         // where messages about the source point (the path as given, "--set", ...)
  Compatibility compatibility;
};

// The text of an fp8lab recipe file or of an accelerate config (told apart by
// looks_like_accelerate_config), parsed as its kind; `file` names it in messages and is the site.
// path stays empty. Throws RecipeError naming file and line. Used by read_source_file and by
// `fp8lab explain` (explain_text), so the two never tell a file apart differently.
RunSource source_from_text(const std::string& text, const std::string& file);
// The same for a file on disk (refused when empty or a directory), with its absolute path.
RunSource read_source_file(const std::string& path);
// The YAML of --set flags; `origin` names it in messages ("--set").
RunSource settings_source(const std::string& yaml, const std::string& origin);
// The ACCELERATE_FP8_* entries of `env` (the caller passes the environment it means), read as
// accelerate reads them. Throws RecipeError naming every accepted variable when none is set.
RunSource environment_source(const std::map<std::string, std::string>& env);

}  // namespace fp8lab::recipes
