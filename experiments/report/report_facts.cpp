#include "experiments/report/report_facts.hpp"

#include "experiments/report/analysis.hpp"

namespace fp8lab::experiments {

ReportFacts::ReportFacts(const ReportInput& input)
    : floors(input.records),
      chaos(input.records),
      rows(ranked_recipe_rows(input.records, floors, input.practical_band)),
      ranked(ranked_runs(input.records, floors)),
      contrasts(recipe_contrasts(rows, input.practical_band)),
      resolution(sweep_resolution(rows, contrasts, input.practical_band)) {}

}  // namespace fp8lab::experiments
