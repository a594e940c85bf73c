// The rows of the ranked tables: one per recipe (and workload), aggregating the seeds it ran on.
// No LibTorch.
//
// A recipe run over several seeds (a sweep's `seeds:`) is one row: each figure is the median over
// the seeds that have it, shown with n. Its verdict is the paired verdict over its seeds
// (paired_verdicts.hpp: the named test of the relative loss error against the practical band);
// the unpaired noise floor (noise_floor.hpp) and the median |final eval rel diff| stay as
// context.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/eval_sampling_error.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/seed_plan.hpp"

namespace fp8lab::experiments {

struct RecipeRow {
  std::vector<const RunRecord*> runs;  // one per seed, in seed order
  const NoiseFloor* floor = nullptr;   // of the first run's baseline family
  std::string family;                  // that family's key (baseline_family)
  PairedVerdict paired;
  std::string verdict;            // paired.verdict
  std::size_t unstable_runs = 0;  // runs that met the instability rule (instability_counts.hpp)
  std::size_t not_finished = 0;   // seeds that diverged or threw
  std::optional<double> median_abs_rel_diff;  // unpaired context (the noise floor's statistic)
  // The eval set's sampling error of one seed's paired error and of one eval loss, relative
  // (eval_sampling_error.hpp): medians over the seeds whose records keep per-window losses.
  std::optional<double> paired_eval_se;
  std::optional<double> unpaired_eval_se;
  // seeds: auto (seed_plan.hpp): the plan its pilot gives, recomputed from the pilot's records.
  std::optional<SeedPlan> seed_plan;

  const RunRecord& first() const { return *runs.front(); }
  // The median over the seeds of a final figure (&FinalFigures::eval_loss).
  std::optional<double> median_at(Field<double> FinalFigures::*figure) const;
  // "0" for one seed, "0, 1, 2 (n=3)" for several.
  std::string seeds_text() const;
  // The verdict with its reason: "diverged (1 of 3 seeds diverged)", "inconclusive (80% power
  // for its test (TOST) at a mean of +0.12% and this spread needs 14 seeds)", "worse (p Holm
  // 0.21 > alpha: not after the family's correction)".
  std::string verdict_text() const;
};

// FP8 runs grouped by (canonical recipe, baseline family: workload, baseline precision, steps and
// placement, from baseline_run_id; noise_floor.hpp), best first: paired verdict class, then the
// mean tail relative error, then label. `band` and `alpha`: the named tests' (named_tests.hpp).
// With `planning` (a seeds: auto sweep) each row gets its seed plan and Stein's two-stage test.
std::vector<RecipeRow> ranked_recipe_rows(const std::vector<RunRecord>& records,
                                          const NoiseFloors& floors,
                                          double band = kDefaultPracticalBand,
                                          double alpha = kDefaultAlpha,
                                          const std::optional<SeedPlanning>& planning = {});

}  // namespace fp8lab::experiments
