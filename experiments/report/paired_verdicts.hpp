// Paired verdicts (issue 20 §2): a recipe's relative loss error against its baseline on the same
// seed, per seed, and over its seeds a 95% interval judged against the practical band
// (paired_statistics.hpp). No LibTorch.
//
// Per seed (one FP8 or null run and the baseline of its seed; eval rows' rel_diff =
// (loss - baseline) / |baseline|, docs/results-schema.md):
//   final  the last eval point's rel_diff
//   tail   the mean rel_diff over the last 10% of eval points (at least one): an average over the
//          end of training, steadier than one point. The verdict's statistic.
// Over seeds (the verdicts, worst first):
//   diverged      a seed's training loss became non-finite ("k of n seeds")
//   failed        a seed's run threw, or the median seed's eval loss fell by less than half of
//                 what its baseline's fell (it did not train)
//   degrades      the tail interval lies above the band
//   inconclusive  it straddles the band, or fewer than 3 seeds finished (no interval worth one)
//   within band   it lies at or below the band
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "experiments/report/paired_statistics.hpp"

namespace fp8lab::experiments {

inline constexpr double kTailFraction = 0.10;

// How many of `eval_points` form the tail: ceil(10%), at least 1 (0 for none).
std::size_t tail_points(std::size_t eval_points);

// Signed per-seed errors of a finished run; nullopt without eval rows that carry rel_diff.
std::optional<double> final_rel_error(const nlohmann::json& record);
std::optional<double> tail_rel_error(const nlohmann::json& record);
// The mean eval loss over the same tail points (contrasts compare recipes with it).
std::optional<double> tail_eval_loss(const nlohmann::json& record);
// The eval loss's own standard error when the record has one (/final/eval_loss_se; optional).
std::optional<double> eval_loss_standard_error(const nlohmann::json& record);

struct PairedVerdict {
  std::string verdict;  // degrades | within band | inconclusive | diverged | failed
  std::string reason;   // "1 of 3 seeds diverged", "2 seeds finished; an interval needs 3", ...
  std::optional<MeanInterval> tail;  // over the finished seeds (>= 2)
  std::optional<MeanInterval> final;
  std::size_t finished = 0;
};

// The verdict of one recipe over its seeds (one record per seed) against `band`.
PairedVerdict paired_verdict(const std::vector<const nlohmann::json*>& seeds, double band);

// Lower is better: within band, inconclusive, degrades, failed, diverged.
int paired_verdict_rank(const std::string& verdict);

// The rules in one paragraph, for the head of every report.
std::string paired_verdict_rules(double band);

}  // namespace fp8lab::experiments
