// The names baselines are filed under (results_store.hpp); FP8 runs take the id the sweep gives
// them (recipes::sweep_run_id). No LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "experiments/fp8/backend.hpp"

namespace fp8lab::experiments {

// "baseline-<workload>-seed<seed>-<fp32|bf16>[-steps<n>]": one per (workload, seed) and options.
std::string baseline_run_id(const std::string& workload, std::int64_t seed,
                            HighPrecision high_precision, std::optional<std::int64_t> steps);

}  // namespace fp8lab::experiments
