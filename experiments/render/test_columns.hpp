// The CSV columns of a named test (issue 31, "Done when"), shared by summary.csv (a recipe row's
// verdict against its baseline) and contrasts.csv (two recipes on the same seeds), and the CSV
// quoting both use (csv_table.hpp). Columns: docs/results-schema.md. No LibTorch.
#pragma once

#include <optional>
#include <string>

#include "experiments/render/csv_table.hpp"
#include "experiments/stats/named_tests.hpp"

namespace fp8lab::experiments {

// "estimate,ci_low,ci_high,ci_level,p_raw,p_holm,family_size,family,test,verdict,mde80,
// seeds_for_80,unstable_runs,runs" (no trailing comma).
extern const char* const kTestColumns;

// One row's values of kTestColumns: the test's figures (empty without a test), then `verdict`
// (the word, or diverged / failed / inconclusive where there is no test), the runs whose status
// is unstable and the runs in the row.
std::string test_columns(const NamedTest* test, const std::string& verdict,
                         std::size_t unstable_runs, std::size_t runs);

}  // namespace fp8lab::experiments
