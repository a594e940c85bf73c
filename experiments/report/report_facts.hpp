// What every report writer concludes from the records, computed once per report in one place so
// that report.md, report.html and summary.csv never disagree: the floors, the ranked recipe rows
// with their paired verdicts, the contrasts and what the sweep can resolve. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "experiments/report/chaos_floor.hpp"
#include "experiments/report/contrasts.hpp"
#include "experiments/report/noise_floor.hpp"
#include "experiments/report/recipe_rows.hpp"
#include "experiments/report/report_data.hpp"

namespace fp8lab::experiments {

struct ReportFacts {
  explicit ReportFacts(const ReportInput& input);
  ReportFacts(const ReportFacts&) = delete;  // rows and contrasts point into the members
  ReportFacts& operator=(const ReportFacts&) = delete;

  NoiseFloors floors;  // unpaired, context only
  ChaosFloors chaos;   // null runs
  std::vector<RecipeRow> rows;
  std::vector<const nlohmann::json*> ranked;  // FP8 runs, best first (analysis.hpp)
  std::vector<Contrast> contrasts;
  std::vector<Resolution> resolution;
};

}  // namespace fp8lab::experiments
