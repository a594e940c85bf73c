// Learning-rate sensitivity (issue 31 §7; Wortsman et al. 2023, "Small-scale proxies for
// large-scale Transformer training instabilities", arXiv 2309.14322): where small models show FP8
// effects, at the edge of stability in learning rate. A sweep varies the learning rate as a
// workload option (workloads: [{llama-xs: {lr: 0.001}}, {llama-xs: {lr: 0.00316}}, ...]; each
// entry its own run ids and baselines); this groups the records of one workload that differ only
// in `lr` (the workload spec without its lr setting) when it has at least 3 learning rates, and
// per arm (the baseline, each FP8 recipe) computes over the seeds:
//
//   loss at lr        the final eval loss, capped at the run's initial eval loss, Wortsman's
//                     min(loss, initial loss); a run that met the instability rule (unstable or
//                     diverged, instability_counts.hpp) counts as the initial loss: it kept no
//                     progress (an FP8 run stops there; a baseline trains on, the same rule holds)
//   unstable at lr    the count with its Clopper-Pearson interval
//   stability edge    per seed, log10 of the geometric midpoint between the largest learning
//                     rate below the first one whose run met the instability rule and that one;
//                     no such run: half a grid step above the largest lr (censored), the lowest
//                     lr unstable: half a step below it (censored)
//   edge shift        per seed, baseline edge - recipe edge in decades (positive: FP8 lowers the
//                     edge), over the seeds common to both; the named test of named_tests.hpp at
//                     the sweep's alpha with band = one grid step (the grid cannot place an edge
//                     closer): `worse` = the recipe's edge is lower; in the report's
//                     exploratory Holm family (multiplicity.hpp). Every seed's shift the same
//                     (sd 0, e.g. all at the same grid point): the exact sign test of each
//                     hypothesis (named_tests.hpp), p = 0.5^n, said so in edge_exact
//   LR sensitivity    per seed, the mean over the grid's learning rates of the capped loss minus
//                     its smallest value (Wortsman's definition), over the seeds with a run at
//                     every lr; and its paired difference from the baseline
//
// Every mean carries its 95% t-interval (paired_statistics.hpp). No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/instability_counts.hpp"
#include "experiments/stats/named_tests.hpp"
#include "experiments/stats/paired_statistics.hpp"

namespace fp8lab::experiments {

// Fewer learning rates than this in a workload group: no learning-rate analysis.
inline constexpr std::size_t kMinLearningRates = 3;

struct LrCell {
  double lr = 0;
  std::vector<std::int64_t> seeds;   // of the runs that did not fail, ascending
  std::vector<double> losses;        // their capped final eval losses, in seed order
  std::optional<MeanInterval> loss;  // over >= 2 seeds
  UnstableCount unstable;
};

struct LrArm {
  std::string label;          // "baseline" or the recipe's label
  std::vector<LrCell> cells;  // one per learning rate of the group, ascending
  // Per seed with a run at every lr: (seed, log10 edge), (seed, sensitivity).
  std::vector<std::pair<std::int64_t, double>> edges, sensitivities;
  std::size_t censored = 0;          // of `edges`: beyond the grid's ends
  std::optional<MeanInterval> edge;  // log10 lr
  std::optional<MeanInterval> sensitivity;
  // Recipes only, over the seeds common with the baseline:
  std::optional<MeanInterval> edge_shift;  // decades, baseline - recipe
  std::optional<NamedTest> edge_test;      // >= kMinPairedSeeds seeds
  // Where every seed's shift is the same (sd 0; edge_test is then the exact sign test):
  // "all 3 seeds at the same grid point as the baseline" (shift 0) or "the same shift on all 3
  // seeds"; empty otherwise.
  std::string edge_exact;
  std::optional<MeanInterval> sensitivity_shift;  // recipe - baseline
};

struct LrSweep {
  std::string workload;     // the workload spec without its lr setting
  std::vector<double> lrs;  // ascending
  double step_decades = 0;  // the grid's spacing: the median log10 ratio of neighbours
  double alpha = kDefaultAlpha;
  std::vector<LrArm> arms;  // the baseline first, then the recipes by label
};

// The learning-rate groups of the records (FP8 runs and baselines; null runs are not arms).
std::vector<LrSweep> lr_sweeps(const std::vector<RunRecord>& records, double alpha);

// A record's learning rate: workload_options.lr, else the spec's lr= setting; nullopt when
// neither is there.
std::optional<double> learning_rate_of(const RunRecord& record);

// "0.00316" (4 significant digits).
std::string lr_text(double lr);

}  // namespace fp8lab::experiments
