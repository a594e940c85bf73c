// The sidecar row (results/layer_stats_sidecar.hpp) of one operand's statistics as a Linear
// measured them (linear/linear_stats.hpp): the one place the training side meets the sidecar's row.
#pragma once

#include <cstdint>
#include <string>

#include "experiments/linear/linear_stats.hpp"
#include "experiments/results/layer_stats_sidecar.hpp"

namespace fp8lab::experiments {

LayerStatsRow layer_stats_row(std::int64_t step, const std::string& layer, Operand tensor,
                              Gemm gemm, const std::string& recipe, const OperandStats& stats);

}  // namespace fp8lab::experiments
