// A recipe from YAML text (file name "r.yaml" in messages), and the message its reading throws,
// for the recipes/ tests that check fields and their errors.
#pragma once

#include <string>

#include "recipes/error.hpp"
#include "recipes/recipe_file.hpp"

namespace fp8lab::testing {

inline recipes::Recipe recipe(const std::string& yaml) {
  return recipes::parse_recipe_text(yaml, "r.yaml");
}

// The RecipeError's text, or "no error" when the text reads.
inline std::string message_of(const std::string& yaml) {
  try {
    recipe(yaml);
  } catch (const recipes::RecipeError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace fp8lab::testing
