// The charts of report.html, built from the run records (svg_chart.hpp draws them): the loss
// curves against the baseline, the final divergence over two recipe axes, the amax and scale
// trajectories per layer, and underflow and saturation over time. html_report.cpp lays them out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/render/svg_chart.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

// Eval and train loss, their difference from the baseline and the weights' divergence.
std::vector<LineChart> loss_charts(const ReportInput& input, const ReportFacts& facts);

// The final divergence over the report's two heatmap axes (heatmap_axes); nullopt when the runs
// vary fewer than two independent recipe fields.
std::optional<HeatmapChart> divergence_heatmap(const ReportInput& input, const ReportFacts& facts);

// amax and scale per layer of the best and the worst run that quantized anything (a run with
// every GEMM overridden has no FP8 operand to show): two charts per run shown.
std::vector<std::vector<LineChart>> trajectory_charts(const ReportFacts& facts);

// The underflowed and saturated fractions of the quantized elements, per step.
std::vector<LineChart> underflow_charts(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
