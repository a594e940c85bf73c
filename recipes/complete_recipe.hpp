// A recipe with every field written out, fields its scaling ignores included, as a YAML mapping
// with dotted keys (fields.hpp): how `fp8lab sweep` hands the canonical recipe of one of its runs
// to the process that runs it (experiments/sweep/run_job.hpp), so that the process need not read,
// parse and expand the sweep file again. Reading it back gives an equal Recipe.
#pragma once

#include <string>

#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

std::string complete_recipe_text(const Recipe& recipe);

// Reads complete_recipe_text's mapping (fields the scaling ignores accepted, as in sweeps:
// Strictness::sweep). Throws RecipeError naming `file`.
Recipe parse_complete_recipe_text(const std::string& text, const std::string& file);

}  // namespace fp8lab::recipes
