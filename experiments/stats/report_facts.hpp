// What every report writer concludes from the records, computed once per report in one place so
// that report.md, report.html and summary.csv never disagree: the floors, the ranked recipe rows
// with their paired verdicts, the contrasts with their named tests and the families' Holm
// correction, what the sweep can resolve, the legend of the tests and the scale of the runs.
// The renderers only render these. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/chaos_floor.hpp"
#include "experiments/stats/contrasts.hpp"
#include "experiments/stats/instability_counts.hpp"
#include "experiments/stats/lr_sensitivity.hpp"
#include "experiments/stats/multiplicity.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

struct ReportFacts {
  explicit ReportFacts(const ReportInput& input);
  ReportFacts(const ReportFacts&) = delete;  // rows and contrasts point into the members
  ReportFacts& operator=(const ReportFacts&) = delete;

  NoiseFloors floors;  // unpaired, context only
  ChaosFloors chaos;   // null runs
  std::vector<RecipeRow> rows;
  std::vector<const RunRecord*> ranked;  // FP8 runs, best first (analysis.hpp)
  std::vector<Contrast> contrasts;
  std::vector<LrSweep> lr;       // the learning-rate groups (lr_sensitivity.hpp); often none
  Multiplicity multiplicity;     // after rows, contrasts and lr: sets their tests' p_holm
  InstabilityFacts instability;  // unstable counts per arm and contrast (instability_counts.hpp)
  std::vector<Resolution> resolution;
  std::vector<std::string> resolution_lines;  // one per family, in words
  std::vector<std::string> legend;            // the named tests, one line each (named_tests.hpp)
  std::string families;            // the families' sizes and what was pre-registered, in words
  std::vector<std::string> scale;  // per workload: steps, tokens per parameter, K
};

}  // namespace fp8lab::experiments
