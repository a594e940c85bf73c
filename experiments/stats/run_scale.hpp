// The scale of a report's runs (issue 31 §9), for its head: per workload, the steps, the tokens
// trained on and the tokens per parameter, so that the scale of every conclusion is in view.
// From the records (steps_completed, throughput.tokens_per_step, parameter_count,
// non_embedding_parameter_count; docs/results-schema.md). The GEMMs' K values are not in the
// records, and the line says so rather than derive them from workload internals. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

// "llama-xs: 300 steps x 4096 tokens = 1.23e+06 tokens; 0.0512 tokens per parameter (2.4e+07
// parameters), 0.41 per non-embedding parameter (3e+06); GEMM K: not in the records", one line
// per workload, from its first finished baseline (else its first finished run).
std::vector<std::string> run_scale_lines(const std::vector<RunRecord>& records);

}  // namespace fp8lab::experiments
