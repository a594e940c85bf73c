// A recipe of one scaling with that scaling's default format, power-of-2 choice and GEMM
// accumulation (recipe.hpp's default_* functions), every other field as Recipe{}: the recipes the
// benchmarks' rows and the Linear tests name by their scaling alone.
#pragma once

#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

inline Recipe recipe_with_defaults(Scaling scaling) {
  Recipe r;
  r.scaling = scaling;
  r.fp8_format = default_fp8_format(scaling);
  r.power_2_scales = default_power_2_scales(scaling);
  r.gemm = default_gemm_accumulation(scaling);
  return r;
}

}  // namespace fp8lab::recipes
