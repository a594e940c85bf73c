// `fp8lab explain FILE`: for an accelerate config file or an fp8lab recipe file, the recipe fp8lab
// will run, the recipe the peer library (accelerate + TE, TE, torchao) really runs, and every
// field dropped or changed on the way (compatibility.hpp).
#pragma once

#include <map>
#include <string>

namespace fp8lab::recipes {

// The text to print. Throws RecipeError (file, line, field, value, accepted values) on bad input.
std::string explain_file(const std::string& path);
std::string explain_text(const std::string& text, const std::string& file);
// The ACCELERATE_FP8_* variables of `env` (the caller passes the environment it means).
std::string explain_environment(const std::map<std::string, std::string>& env);

}  // namespace fp8lab::recipes
