// A recipe written back as the text of an fp8lab recipe file (recipe_file.hpp), for callers that
// hold a Recipe but speak in recipe text: the Python package, whose ops and fp8lab.Recipe take
// text, gets the recipe of the ACCELERATE_FP8_* variables or of a recipe with added
// keep_high_precision patterns this way, read by the one reader.
#pragma once

#include <string>

#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

// "scaling: NAME" and every field whose value differs from that scaling's defaults, nested
// fields (gemm, module_filter, keep_high_precision, autoswitch) as nested mappings and names as
// double-quoted YAML strings. parse_recipe_text reads it back to a recipe with the same
// canonical_string; that is checked here (std::logic_error if not), so the text never says a
// different recipe.
std::string recipe_file_text(const Recipe& recipe);

}  // namespace fp8lab::recipes
