// contrasts.csv: one row per contrast between two recipes on the same seeds (contrasts.hpp), with
// the named test's columns (test_columns.hpp) and the two recipes. Columns:
// docs/results-schema.md. No LibTorch.
#pragma once

#include <string>

#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

std::string render_contrasts_csv(const ReportInput& input);
// The same from facts already built of `input` (write_reports builds them once for every file).
std::string render_contrasts_csv(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
