#include "experiments/run/layer_stats_rows.hpp"

namespace fp8lab::experiments {

LayerStatsRow layer_stats_row(std::int64_t step, const std::string& layer, Operand tensor,
                              Gemm gemm, const std::string& recipe, const OperandStats& stats) {
  LayerStatsRow row;
  row.step = step;
  row.layer = layer;
  row.tensor = name(tensor);
  row.gemm = name(gemm);
  row.copy = sim::scaling::to_string(sim::scaling::scale_axis(gemm, tensor));
  row.recipe = recipe;
  row.quantizations = static_cast<std::int64_t>(stats.quantizations);
  row.count = static_cast<std::int64_t>(stats.count);
  row.underflowed = static_cast<std::int64_t>(stats.underflowed);
  row.saturated = static_cast<std::int64_t>(stats.saturated);
  row.nan = static_cast<std::int64_t>(stats.nan);
  row.underflow_pct = stats.underflow_pct();
  row.overflow_pct = stats.overflow_pct();
  row.sqnr_db = stats.sqnr_db();
  row.mse = stats.mse();
  row.amax = stats.amax;
  row.scale_inv_min = stats.scale_inv_min;
  row.scale_inv_max = stats.scale_inv_max;
  row.max_block_dynamic_range_log2 = stats.max_block_dynamic_range_log2;
  row.kurtosis = stats.kurtosis();
  return row;
}

}  // namespace fp8lab::experiments
