// The names runs are filed under (results_store.hpp). No LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/cuda_backend.hpp"

namespace fp8lab::experiments {

// "baseline-<workload>-seed<seed>-<fp32|bf16>[-steps<n>]": one per (workload, seed) and options;
// a workload spec with options is spelt workload_file_name(spec) (llama-s.d_model-384).
std::string baseline_run_id(const std::string& workload, std::int64_t seed,
                            HighPrecision high_precision, std::optional<std::int64_t> steps);

// "<recipe id>[-steps<n>]" placed for the backend (placed_run_id): an FP8 run's id, from the id
// the sweep gives its recipe, workload and seed (recipes::sweep_run_id) and the --steps override,
// as baseline ids name it. Without the steps, runs of 3 and 5 steps shared an id (issue 19).
std::string fp8_run_id(const std::string& recipe_id, std::optional<std::int64_t> steps,
                       const BackendChoice& backend);

// The id a run (FP8 or baseline) is filed under for a backend choice: `id` itself when the model
// trains on the CPU (sim, cuda-staged: the same bits, so their results are shared), `id` + "-cuda"
// when it trains on the GPU (its non-Linear ops give other bits), so that a results directory
// never mixes the two under one id.
std::string placed_run_id(const std::string& id, const BackendChoice& backend);

}  // namespace fp8lab::experiments
