// How a run's model is made from the workload's (ModelHooks, training.hpp), defined once in
// run_executor.cpp and shared with what builds models beside a run: the on-trajectory probes
// (probe_engine.hpp) build each probed recipe's model exactly as an FP8 run of that recipe.
#pragma once

#include <memory>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/what_if.hpp"
#include "experiments/run/run_diagnostics.hpp"
#include "experiments/run/training.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

// The baseline's model: every Linear a HighPrecisionLinear of `precision` on `backend`.
ModelHooks baseline_hooks(HighPrecision precision, std::shared_ptr<const LinearBackend> backend,
                          torch::Device device,
                          std::shared_ptr<const WhatIfRecipes> what_if = nullptr);

// An FP8 run's model: convert_model with `recipe`, the other Linears the baseline's, the
// recipe's LayerNorm / activation plans. `diagnostics` (null for the throughput timings and the
// probes): the run's first-non-finite watch and autoswitch rule, attached after conversion.
ModelHooks fp8_hooks(const recipes::Recipe& recipe, HighPrecision precision,
                     std::shared_ptr<const LinearBackend> backend, torch::Device device,
                     std::shared_ptr<const WhatIfRecipes> what_if = nullptr,
                     std::shared_ptr<RunDiagnostics> diagnostics = nullptr);

}  // namespace fp8lab::experiments
