// A run request of the small mlp workload from a recipe's YAML text (file name "test.yaml"), with
// one timing step and the sweep's run id for seed 0: the in-process runs of the experiments tests.
#pragma once

#include <cstdint>
#include <string>

#include "experiments/run/run_executor.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::testing {

inline experiments::RunRequest request_for(const std::string& recipe_text, std::int64_t steps) {
  experiments::RunRequest r;
  r.workload = "mlp";
  r.steps = steps;
  r.timing_steps = 1;
  r.recipe = recipes::parse_recipe_text(recipe_text, "test.yaml");
  r.run_id = recipes::sweep_run_id(*r.recipe, r.workload, 0);
  return r;
}

}  // namespace fp8lab::testing
