#include "experiments/stats/report_facts.hpp"

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/run_scale.hpp"

namespace fp8lab::experiments {

ReportFacts::ReportFacts(const ReportInput& input)
    : floors(input.records),
      chaos(input.records),
      rows(ranked_recipe_rows(input.records, floors, input.practical_band, input.alpha,
                              input.seed_planning)),
      ranked(ranked_runs(input.records, floors)),
      contrasts(recipe_contrasts(rows, input.practical_band, input.alpha)),
      lr(lr_sweeps(input.records, input.alpha)),
      multiplicity(apply_holm(rows, contrasts, input.hypotheses, lr)),
      instability(instability_facts(input.records, rows, contrasts)),
      resolution(sweep_resolution(rows, contrasts, input.alpha)),
      legend(named_test_legend(input.practical_band, input.alpha)),
      scale(run_scale_lines(input.records)) {
  const auto& m = multiplicity;
  families = "Families: " + std::to_string(m.confirmatory) + " confirmatory test" +
             (m.confirmatory == 1 ? "" : "s") +
             (input.hypotheses.empty() ? " (the sweep pre-registers no hypotheses)"
                                       : " (pre-registered in the sweep's hypotheses)") +
             ", " + std::to_string(m.exploratory) + " exploratory test" +
             (m.exploratory == 1 ? "" : "s") +
             " (every other verdict, contrast and learning-rate edge shift with a test)";
  for (std::size_t i = 0; i < m.not_tested.size(); ++i) {
    families += (i == 0 ? "; pre-registered but not tested by these records: " : ", ") +
                m.not_tested[i];
  }
  families += ".";
  for (const auto& r : resolution) {
    resolution_lines.push_back(describe_resolution(r, input.practical_band, input.alpha));
  }
}

}  // namespace fp8lab::experiments
