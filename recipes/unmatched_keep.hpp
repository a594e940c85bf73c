// The keep_high_precision patterns no Linear of a model matches. Defined in lowering.cpp, beside
// keeps_high_precision, whose matching rule (std::regex_match, ECMAScript) it shares.
#pragma once

#include <string>
#include <vector>

#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

// The patterns of recipe.keep_high_precision (of layers, fprop, dgrad, wgrad, in that order, each
// once) that match none of `layers` (a model's Linear names). Such a pattern keeps nothing: most
// often a misspelt name (llama's blocks are block0, block1, ...), which convert_model warns about.
// Not an error: a sweep applies one recipe to every workload, and their names differ.
std::vector<std::string> unmatched_keep_patterns(const Recipe& recipe,
                                                 const std::vector<std::string>& layers);

}  // namespace fp8lab::recipes
