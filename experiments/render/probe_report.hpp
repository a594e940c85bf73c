// The report's section "On the baseline's trajectory" (issue 41 items 3 and 4), leading the report
// (report_layout.cpp): the probes' table per recipe with intervals, the same figures measured in
// each recipe's own trained runs, stochastic recipes' mean-of-draws bias and draw spread, the
// pairwise table, the whole-model error against step, a per-layer x GEMM attribution heatmap per
// recipe, and "Does it predict?". Built from the sidecars the records name (input.probe_files);
// absent when no record names one, so that such a report is unchanged. No LibTorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/render/report_tables.hpp"
#include "experiments/render/svg_chart.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

// An attribution heatmap, and the same values as a table (report.md has no charts).
struct ProbeHeatmap {
  HeatmapChart chart;
  ReportTable table;
};

struct ProbeSection {
  std::vector<ReportTable> tables;  // the probe table first
  LineChart error_chart;
  std::vector<ProbeHeatmap> heatmaps;
  ReportTable prediction;  // no rows when no trained arm matches a probed recipe
};

std::optional<ProbeSection> probe_section(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
