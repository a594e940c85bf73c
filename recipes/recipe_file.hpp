// fp8lab's own recipe file: a YAML mapping of recipe fields (fields.hpp), e.g.
//
//   scaling: delayed
//   fp8_format: HYBRID
//   amax_history_len: 16
//   amax_compute_algo: max
//   override_linear_precision: [false, false, true]
//   gemm: {fprop: hopper_fast}
//
// Absent fields take accelerate's defaults (recipe.hpp). Fields the scaling does not use are
// errors here (Strictness::file), so a file never says something that does not happen.
#pragma once

#include <string>

#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

Recipe read_recipe_file(const std::string& path);
// `file` names the text in messages. Empty text is the default recipe (for tests and callers
// that build text); an empty or comment-only *file* is an error (read_recipe_text).
Recipe parse_recipe_text(const std::string& text, const std::string& file);
// A recipe file's or accelerate config's text. RecipeError naming the path when it is a
// directory, unreadable, or empty (no text, or only comments): a file that says nothing is a
// mistake, not "all defaults".
std::string read_recipe_text(const std::string& path);

}  // namespace fp8lab::recipes
