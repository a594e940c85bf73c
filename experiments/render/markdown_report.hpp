// report.md: the sweep in a terminal or a pull request: the noise floor, the recipes ranked with
// their verdicts (how each ran, what the peer would change or refuse, links to the records), the
// baselines, what diverged or failed and where, and the throughput table.
#pragma once

#include <string>

#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

std::string render_markdown_report(const ReportInput& input);
// The same from facts already built of `input` (write_reports builds them once for every file).
std::string render_markdown_report(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
