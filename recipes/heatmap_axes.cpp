#include "recipes/heatmap_axes.hpp"

#include <algorithm>
#include <stdexcept>

#include "recipes/error.hpp"
#include "recipes/fields.hpp"

namespace fp8lab::recipes {

void check_heatmap_axes(const std::vector<std::string>& axes,
                        const std::vector<std::string>& varied) {
  std::string given, accepted;
  for (const auto& a : axes) given += (given.empty() ? "" : ",") + a;
  for (const auto& v : varied) accepted += (accepted.empty() ? "" : ", ") + v;
  const std::string options =
      varied.size() >= 2
          ? "; accepted: two different recipe fields these runs vary: " + accepted
          : "; accepted: none, these runs vary " +
                (varied.empty() ? std::string("no recipe field") : "only " + accepted) +
                " (a heatmap needs two): drop --heatmap-axes";
  const std::string flag = "--heatmap-axes '" + given + "': ";
  if (axes.size() != 2) throw std::invalid_argument(flag + "expected two fields" + options);
  if (axes[0] == axes[1]) {
    throw std::invalid_argument(flag + "names '" + axes[0] + "' twice" + options);
  }
  for (const auto& axis : axes) {
    if (!is_recipe_field(axis)) {
      const auto guess = did_you_mean(axis, recipe_field_names());
      throw std::invalid_argument(flag + "'" + axis + "' is not a recipe field" +
                                  (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                                  options);
    }
    if (std::find(varied.begin(), varied.end(), axis) == varied.end()) {
      throw std::invalid_argument(
          flag + "'" + axis + "' is a recipe field these runs do not vary (one value)" + options);
    }
  }
}

}  // namespace fp8lab::recipes
