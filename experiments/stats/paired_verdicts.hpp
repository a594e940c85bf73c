// Paired verdicts (issue 20 §2, issue 31 §1): a recipe's relative loss error against its baseline
// on the same seed, per seed, and over its seeds the named test of their mean against the
// practical band at the sweep's alpha (named_tests.hpp). No LibTorch.
//
// Per seed (one FP8 or null run and the baseline of its seed; eval rows' rel_diff =
// (loss - baseline) / |baseline|, docs/results-schema.md):
//   final  the last eval point's rel_diff
//   tail   the mean rel_diff over the last 10% of eval points (at least one; tail_points,
//          results/eval_tail.hpp): an average over the end of training, steadier than one point.
//          The verdict's statistic.
// Over seeds (the verdicts):
//   diverged      a seed's training loss became non-finite ("k of n seeds")
//   failed        a seed's run threw, or the median seed's eval loss fell by less than half of
//                 what its baseline's fell (it did not train)
//   inconclusive  fewer than 3 seeds finished (no interval worth one)
//   else          the named test's word: worse beyond band, equivalent, worse, better, not worse
//                 or inconclusive (named_tests.hpp)
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "experiments/results/eval_tail.hpp"  // the tail: tail_points
#include "experiments/results/run_record.hpp"
#include "experiments/stats/named_tests.hpp"
#include "experiments/stats/paired_statistics.hpp"

namespace fp8lab::experiments {

// Signed per-seed errors of a finished run; nullopt without eval rows that carry rel_diff.
std::optional<double> final_rel_error(const RunRecord& record);
std::optional<double> tail_rel_error(const RunRecord& record);
// The mean eval loss over the same tail points (contrasts compare recipes with it).
std::optional<double> tail_eval_loss(const RunRecord& record);
// The eval loss's own standard error when the record has one (/final/eval_loss_se; optional).
std::optional<double> eval_loss_standard_error(const RunRecord& record);

struct PairedVerdict {
  std::string verdict;  // a named test's word (named_tests.hpp), diverged, unstable or failed
  std::string reason;   // "1 of 3 seeds diverged", "2 seeds finished; an interval needs 3", ...
  std::optional<NamedTest> test;     // the tail interval's test, when there is one (>= 3 seeds)
  std::optional<MeanInterval> tail;  // over the finished seeds (>= 2)
  std::optional<MeanInterval> final;
  std::size_t finished = 0;
};

// The verdict of one recipe over its seeds (one record per seed) against `band` at `alpha`. With
// `pilot_seeds` (a row of a `seeds: auto` sweep, seed_plan.hpp) whose every seed gave a tail
// error, the tail interval is Stein's two-stage one: the mean of all seeds, the pilot's sd and
// degrees of freedom.
PairedVerdict paired_verdict(const std::vector<const RunRecord*>& seeds, double band,
                             double alpha = kDefaultAlpha,
                             const std::vector<std::int64_t>& pilot_seeds = {});

// The reason an inconclusive test gives: what 80% power of the test shown would need ("80% power
// for its test (TOST) at a mean of +0.12% and this spread needs 14 seeds", seeds_for_80), or
// that no count of seeds would (e.g. TOST at a mean outside the band).
std::string power_reason(const NamedTest& test);

// The paired statistic in one paragraph, for the head of every report (the tests' legend is
// named_test_legend).
std::string paired_verdict_rules();

}  // namespace fp8lab::experiments
