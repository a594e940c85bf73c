// Multiplicity (issue 31 §2): Holm-Bonferroni over each report's families of named tests. The
// hypotheses a sweep pre-registers (sweep.json "hypotheses", recipes/sweep_hypotheses.hpp) form
// the confirmatory family; every other verdict, contrast and learning-rate edge shift with a test
// forms the exploratory family (the only one when nothing is pre-registered). Rows without a test (diverged, failed,
// fewer than 3 seeds) are in no family. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "experiments/stats/contrasts.hpp"
#include "experiments/stats/lr_sensitivity.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

struct Multiplicity {
  std::size_t confirmatory = 0, exploratory = 0;  // the families' sizes
  // Pre-registered tests that no row or contrast with a test matches, in words ("verdict
  // scaling=mxfp8 fp8_format=E5M2"): not tested by these records.
  std::vector<std::string> not_tested;
};

// Sets every test's family, family_size and p_holm: the rows' verdicts, the contrasts and the
// learning-rate edge shifts (lr_sensitivity.hpp; never pre-registered, so exploratory).
Multiplicity apply_holm(std::vector<RecipeRow>& rows, std::vector<Contrast>& contrasts,
                        const std::vector<PreRegisteredTest>& hypotheses, std::vector<LrSweep>& lr);

// Reads sweep.json's "hypotheses" array ({"verdict": label} or {"contrast": [a, b]}); entries of
// another shape are skipped (the sweep file was checked when it ran).
std::vector<PreRegisteredTest> pre_registered_tests(const nlohmann::json& hypotheses);

}  // namespace fp8lab::experiments
