// The report's view of the per-layer statistics sidecars (docs/results-schema.md, "Layer
// statistics sidecar"): which layer breaks a run.
// - Per FP8 run, heatmaps over layers x steps of its underflow% and SQNR, beside its baseline's:
//   the baseline's what-if rows of the run's own scaling (the same recipe's quantization of the
//   unperturbed trajectory's tensors), when the baseline measured that scaling.
// - The what-if table: per run and recipe (its own and each what-if one), the pooled underflow%
//   and overflow%, the median and worst SQNR and the worst layer, beside the baseline's figures
//   for the same recipe.
// A record whose sidecar is missing or unreadable is named in a note, not skipped silently.
// No LibTorch; the sidecars are read through layer_stats_sidecar.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

// The heatmaps of the first kMaxLayerStatsRuns FP8 runs with a sidecar (the rest are counted in a
// note) and the what-if table, as HTML; "" when no record has a sidecar.
inline constexpr std::size_t kMaxLayerStatsRuns = 8;
std::string render_layer_stats_html(const ReportInput& input);
// The what-if table for report.md, and the sidecars that could not be read; "" when none.
std::string render_layer_stats_markdown(const ReportInput& input);

// One heatmap cell's figures: a layer at a step, pooled over the tensors and copies of one
// recipe's rows.
struct LayerStepFigures {
  double underflow_pct = 0.0;  // 100 Σunderflowed / Σcount
  double worst_sqnr_db = 0.0;  // the lowest SQNR of its copies (the one that breaks first)
};
// figures[layer][step] for `recipe`'s rows; layers and steps in the order first seen.
struct LayerStepTable {
  std::vector<std::string> layers;
  std::vector<std::int64_t> steps;
  std::vector<std::vector<std::optional<LayerStepFigures>>> figures;
};
LayerStepTable layer_step_table(const std::vector<LayerStatsRow>& rows, const std::string& recipe);

}  // namespace fp8lab::experiments
