// What-if statistics: the run's tensors quantized by other recipes (recipes/what_if.hpp), on the
// steps whose statistics are kept, measured like the run's own quantizations (OperandStats) and
// never fed to the training. Each recipe is lowered once (recipes/lowering.hpp plan()) and
// executed by sim::scaling::quantize, whatever backend trains: the numbers are sim's.
// No LibTorch.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/linear_stats.hpp"
#include "sim/scaling/plan.hpp"

namespace fp8lab::experiments {

struct WhatIfRecipe {
  std::string name;  // as the user wrote it (the sidecar's recipe column)
  // plans[tensor][gemm] for the pairs a Linear quantizes; kHighPrecision where the recipe keeps
  // that GEMM in high precision (recipes::gemm_runs_fp8), so nothing is measured there.
  std::array<std::array<sim::scaling::QuantizePlan, 3>, 3> plans{};
};
using WhatIfRecipes = std::vector<WhatIfRecipe>;

// The recipes the names stand for (recipes::what_if_recipe), lowered. Throws recipes::RecipeError
// naming `source` (the option or sweep file) for an unknown or stateful name, or a repeated one.
WhatIfRecipes lower_what_if(const std::vector<std::string>& names, const std::string& source);

// Quantizes x (host memory), the `tensor` operand of `gemm`, under every recipe and merges the
// statistics into stats.what_if[i] (grown to recipes.size()).
void measure_what_if(const WhatIfRecipes& recipes, Operand tensor, Gemm gemm, ConstMatrix x,
                     LinearStats& stats);

}  // namespace fp8lab::experiments
