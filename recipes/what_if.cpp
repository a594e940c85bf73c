#include "recipes/what_if.hpp"

#include "recipes/fields.hpp"

namespace fp8lab::recipes {

std::string accepted_what_if_names() {
  // accepted_scalings() lists delayed first ("delayed, current, ..."): every other one.
  const std::string all = accepted_scalings();
  const std::string delayed = std::string(name(Scaling::delayed)) + ", ";
  return all.rfind(delayed, 0) == 0 ? all.substr(delayed.size()) : all;
}

Recipe what_if_recipe(std::string_view text, const Site& site, const std::string& field) {
  const auto scaling = parse_scaling(text);
  if (!scaling || *scaling == Scaling::delayed) {
    throw RecipeError(site, field, std::string(text),
                      scaling ? "a stateful scaling (an amax history of its own "
                                "quantizations) cannot be measured beside another's training:"
                              : "unknown what-if recipe",
                      accepted_what_if_names());
  }
  return resolve({{"scaling", std::string(text), site}}, Strictness::file);
}

}  // namespace fp8lab::recipes
