// Seeds planned from power (issue 41 item 5, sweep key `seeds: auto` with `seed_budget:`,
// recipes/sweep.hpp): every row (a recipe on a workload) runs a pilot of 3 seeds; its pilot's sd of
// the paired relative error (the verdict's statistic, paired_verdicts.hpp) sizes the row, capped
// by the budget; the row is tested once on all its seeds. An internal pilot (Wittes and Brittain
// 1990) in the form that keeps the level exact with a pilot this small: Stein's two-stage test
// (Stein 1945). No JSON, no LibTorch.
//
// Why not the plain re-estimation (plan from the pilot's sd, then the ordinary t-test on all n):
// with 3 pilot seeds its sd has 2 degrees of freedom, a pilot whose sd came out small stops at few
// seeds and is then tested with that small sd, and the realised type I error of non-inferiority
// at the margin rose to 0.064-0.078 at alpha 0.05 (tests/experiments/report_seed_plan_test.cpp
// measures it). Stein's test keeps the mean of all n seeds but its sd and degrees of freedom from
// the pilot only: given the pilot's sd (which alone decides n) the mean of all n is normal with
// variance sd^2 / n, so (mean - b) sqrt(n) / s_pilot is Student t with 2 degrees of freedom for
// every n the plan picks, and each named test keeps its level exactly.
//
// The plan: with s the pilot's sd, nu = 2 its degrees of freedom and b the band,
//   TOST (an `equivalent` answer)     n = ceil(((t_(1-alpha, nu) + t_(0.9, nu)) s / b)^2)
//   non-inferiority (`not worse`)     n = ceil(((t_(1-alpha, nu) + t_(0.8, nu)) s / b)^2)
// each the smallest n at which Stein's test has at least 80% power at a true mean of 0 (Stein's
// bound: |mean| sqrt(n) / s >= ... holds for every pilot sd; the power at 0 is what a recipe that
// changes nothing would have). The settling test is TOST when its n fits the budget (the stronger
// answer), else non-inferiority; the row runs max(3, min(n, budget)) seeds. The budget is per
// row, so that each row's plan depends on its own pilot only (resume, shards of rows).
// A pilot that is not 3 finished seeds with a paired error is not planned: the row stays at its
// pilot (its verdict is diverged, failed, unstable or has no test whatever more seeds show).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/paired_statistics.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments {

inline constexpr auto kPilotSeedCount = static_cast<std::size_t>(recipes::kPilotSeeds);

// A sweep's `seeds: auto` as sweep.json records it ("seed_planning").
struct SeedPlanning {
  std::size_t budget = 0;  // the most seeds a row runs, its pilot's included
  std::vector<std::int64_t> pilot_seeds;
};

struct SeedPlan {
  std::size_t pilot = 0;  // pilot values the plan used
  double pilot_sd = 0;
  std::string test;                    // the settling test planned for: "TOST", "non-inferiority"
  std::optional<std::size_t> planned;  // the seeds it needs (none: not planned, `reason` says)
  std::size_t capped = 0;              // the seeds the row runs: max(pilot, min(planned, budget))
  std::string reason;                  // why a pilot was not planned
};

// The plan of one row from its pilot's paired errors (above).
SeedPlan plan_seeds(std::span<const double> pilot, double band, double alpha, std::size_t budget);
// The same from the pilot's records: each must have finished with a paired tail error
// (tail_rel_error), else the row is not planned and the reason says which seed.
SeedPlan plan_row_seeds(const std::vector<const RunRecord*>& pilot, double band, double alpha,
                        std::size_t budget);

// "TOST needs 14 seeds for 80% power at the pilot's sd 0.12%; runs 14 (seed_budget 20)".
std::string describe_seed_plan(const SeedPlan& plan, std::size_t budget);
// The report's cell "planned/run": "14/14", "41/20", "-/3" (not planned).
std::string seed_plan_cell(const SeedPlan& plan, std::size_t seeds_run);

// Stein's interval of a planned row: the mean of all its values, the sd and degrees of freedom of
// its pilot's (`pilot` values are among `all`). nullopt with fewer than 2 pilot values.
std::optional<MeanInterval> two_stage_interval(std::span<const double> all,
                                               std::span<const double> pilot);

}  // namespace fp8lab::experiments
