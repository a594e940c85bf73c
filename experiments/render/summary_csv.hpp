// summary.csv: one row per requested combination of the sweep (the rows of sweep.json), pointing at
// the run that stands for it (several requests may share one distinct run); a directory without
// sweep.json (a single `fp8lab run`) gets one row per FP8 run. Columns: docs/results-schema.md.
#pragma once

#include <string>

#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

std::string render_summary_csv(const ReportInput& input);
// The same from facts already built of `input` (write_reports builds them once for every file).
std::string render_summary_csv(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
