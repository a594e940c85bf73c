// report.md: the sweep in a terminal or a pull request: baselines, the recipes ranked with their
// verdicts, what diverged or failed and where, and the throughput table.
#pragma once

#include <string>

#include "experiments/report/report_data.hpp"

namespace fp8lab::experiments {

std::string render_markdown_report(const ReportInput& input);

}  // namespace fp8lab::experiments
