// The names runs are filed under (results_store.hpp). No LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "experiments/fp8/backend.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

// "baseline-<workload>-seed<seed>-<fp32|bf16>[-steps<n>]": one per (workload, seed) and options.
std::string baseline_run_id(const std::string& workload, std::int64_t seed,
                            HighPrecision high_precision, std::optional<std::int64_t> steps);

// The id a sweep gives this run (FNV-1a 64 of the canonical recipe, workload and seed, as
// recipes::expand does; a test checks that they agree), for `fp8lab run`.
std::string sweep_run_id(const recipes::Recipe& recipe, const std::string& workload,
                         std::int64_t seed);

}  // namespace fp8lab::experiments
