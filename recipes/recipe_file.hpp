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
// `file` names the text in messages.
Recipe parse_recipe_text(const std::string& text, const std::string& file);

}  // namespace fp8lab::recipes
