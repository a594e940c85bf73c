// The rows of the ranked tables: one per recipe (and workload), aggregating the seeds it ran on.
// No LibTorch.
//
// A recipe run over several seeds (a sweep's `seeds:`) is one row: each figure is the median over
// the seeds that have it, shown with n. Its verdict: if any seed diverged or threw, the worst of
// its seeds' verdicts (a recipe that diverges on one seed in three can diverge, and the row must
// say so, with how many); otherwise the verdict rule of analysis.hpp applied to the medians
// (median improvement ratio, median |final eval rel diff| against the noise floor).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "experiments/report/noise_floor.hpp"

namespace fp8lab::experiments {

struct RecipeRow {
  std::vector<const nlohmann::json*> runs;  // one per seed, in seed order
  const NoiseFloor* floor = nullptr;        // of the first run's baseline family
  std::string verdict;
  std::size_t not_finished = 0;             // seeds that diverged or threw
  std::optional<double> median_abs_rel_diff;

  const nlohmann::json& first() const { return *runs.front(); }
  // The median over the seeds of a number at a JSON pointer ("/final/eval_loss").
  std::optional<double> median_at(const char* pointer) const;
  // "0" for one seed, "0, 1, 2 (n=3)" for several.
  std::string seeds_text() const;
  // The verdict with its counts when seeds disagree: "diverged (1 of 3 seeds)".
  std::string verdict_text() const;
};

// FP8 runs grouped by (canonical recipe, baseline family: workload, baseline precision, steps and
// placement, from baseline_run_id; noise_floor.hpp), best first: verdict class, then median
// |final eval rel diff|, then label.
std::vector<RecipeRow> ranked_recipe_rows(const std::vector<nlohmann::json>& records,
                                          const NoiseFloors& floors);

}  // namespace fp8lab::experiments
