// What the reports conclude from single run records: an unpaired label per run (context: the
// summary.csv `run_verdict` column, the charts' groups and the list of diverged and failed runs;
// the recipe rows' verdicts are paired, paired_verdicts.hpp), the ranking of runs, and the recipe
// axes a sweep varied. Shared by report.md, report.html and summary.csv so that they never disagree.
// No LibTorch.
//
// Unpaired labels (docs/results-schema.md), given the tolerance of the run's baseline family
// (noise_floor.hpp: the seed-to-seed noise floor of >= 3 baseline seeds, else the fixed
// kTracksBaselineTolerance). The last two compare one seed's difference with a threshold: they
// are descriptions, not tests (issue 42 item 4; the words that a test decides are the paired
// verdicts), and were `tracks baseline` and `degraded` before:
//   error            the run threw (status failed)
//   diverged         non-finite training loss (status diverged)
//   unstable         met the sweep's pre-registered instability rule (status unstable;
//                    recipes/instability_rule.hpp): its record ends where it tripped
//   failed to train  finished, but its eval loss fell by less than half of what the baseline's fell
//                    over the same steps (e.g. gradients underflowing to zero)
//   within tolerance |final eval rel diff| <= the tolerance: no further from its baseline than two
//                    seeds of the baseline are from each other
//   beyond tolerance anything else that finished
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

// The fallback when the noise floor is unmeasured (fewer than 3 baseline seeds): the 2% of issue
// 9's acceptance (the published result is that FP8 training tracks BF16).
inline constexpr double kTracksBaselineTolerance = 0.02;
inline constexpr double kFailedToTrainImprovement = 0.5;

std::string run_verdict(const RunRecord& record, double tolerance = kTracksBaselineTolerance);
// Lower is better: label class first, then |final eval rel diff|.
int verdict_rank(const std::string& verdict);

// The final |relative eval-loss difference| of a finished run, if it has one.
std::optional<double> final_eval_rel_diff(const RunRecord& record);
// Eval-loss improvement of the run over the baseline's improvement (1 = as much as the baseline).
std::optional<double> improvement_ratio(const RunRecord& record);

class NoiseFloors;  // noise_floor.hpp

// FP8 runs (kind != baseline), best first, each judged against its noise floor (once per run,
// before sorting).
std::vector<const RunRecord*> ranked_runs(const std::vector<RunRecord>& records,
                                          const NoiseFloors& floors);

// Recipe fields whose values differ between the FP8 runs, most distinct values first (ties in
// the order of the canonical string).
std::vector<std::string> varied_recipe_axes(const std::vector<RunRecord>& records);

// A record's recipe field as text ("" when absent).
std::string recipe_value(const RunRecord& record, const std::string& axis);

// Whether a record is an FP8 run (kind "fp8"), not a baseline or a null run (kind "null": the
// baseline with a perturbation that is not FP8, chaos_floor.hpp).
bool is_fp8_run(const RunRecord& record);

// A number from a JSON value that may be null (non-finite numbers are written as null).
std::optional<double> number_or_null(const nlohmann::json& value);

}  // namespace fp8lab::experiments
