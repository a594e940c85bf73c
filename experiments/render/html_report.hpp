// report.html: one self-contained file (inline CSS, inline SVG drawn by svg_chart.hpp, a few lines
// of inline JavaScript that only check the page; no external resource), so that it opens offline
// and can be attached anywhere. Sections: the recipes ranked (one row per recipe, medians over its
// seeds; how it ran, what accelerate + TE / torchao would change or refuse, links to the records),
// the baselines and their noise floor, loss curves against the baseline (grouped by verdict), the
// relative eval-loss difference over time, a heatmap of the final difference over two recipe axes
// (median, n), amax and scale trajectories of the best and the worst runs, underflow and
// saturation over time, and throughput.
#pragma once

#include <string>

#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

std::string render_html_report(const ReportInput& input);
// The same from facts already built of `input` (write_reports builds them once for every file).
std::string render_html_report(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
