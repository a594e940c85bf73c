#include "experiments/linear/what_if.hpp"

#include <set>

#include "recipes/lowering.hpp"
#include "recipes/what_if.hpp"
#include "sim/scaling/execute.hpp"

namespace fp8lab::experiments {

WhatIfRecipes lower_what_if(const std::vector<std::string>& names, const std::string& source) {
  WhatIfRecipes lowered;
  std::set<std::string> seen;
  for (const auto& name : names) {
    const recipes::Site site{source, 0};
    if (!seen.insert(name).second) {
      throw recipes::RecipeError(site, "what_if", name,
                                 "is named twice:", recipes::accepted_what_if_names());
    }
    const recipes::Recipe recipe = recipes::what_if_recipe(name, site, "what_if");
    WhatIfRecipe what_if{name, {}};
    for (const auto gemm : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
      for (const auto tensor : {Operand::kInput, Operand::kWeight, Operand::kGradOutput}) {
        if (!sim::scaling::uses_operand(gemm, tensor)) continue;
        auto& plan =
            what_if.plans[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(gemm)];
        plan = recipes::plan(recipe, tensor, gemm);
        if (!recipes::gemm_runs_fp8(recipe, gemm)) {
          plan.kind = sim::scaling::QuantizeKind::kHighPrecision;
        }
      }
    }
    lowered.push_back(std::move(what_if));
  }
  return lowered;
}

void measure_what_if(const WhatIfRecipes& recipes, Operand tensor, Gemm gemm, ConstMatrix x,
                     LinearStats& stats) {
  if (stats.what_if.size() < recipes.size()) stats.what_if.resize(recipes.size());
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    const auto& plan =
        recipes[i].plans[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(gemm)];
    if (plan.kind == sim::scaling::QuantizeKind::kHighPrecision) continue;
    const auto result = sim::scaling::quantize(plan, x.data, x.rows, x.cols);
    stats.what_if[i][static_cast<std::size_t>(tensor)][static_cast<std::size_t>(gemm)].merge(
        measure_quantization(x, result));
  }
}

}  // namespace fp8lab::experiments
