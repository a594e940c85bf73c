// report.html: one self-contained file (inline CSS, inline SVG drawn by svg_chart.hpp, a few lines
// of inline JavaScript that only check the page; no external resource), so that it opens offline
// and can be attached anywhere. Sections: loss curves against the baseline, the relative eval-loss
// difference over time, a heatmap of the final difference over two recipe axes, amax and scale
// trajectories of the best and the worst runs, underflow and saturation over time, the recipes
// ranked, and throughput.
#pragma once

#include <string>

#include "experiments/report/report_data.hpp"

namespace fp8lab::experiments {

std::string render_html_report(const ReportInput& input);

}  // namespace fp8lab::experiments
