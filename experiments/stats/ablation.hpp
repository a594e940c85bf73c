// The layer ranking of a `method: ablate` sweep (recipes/ablation.hpp): which Linears (or GEMMs)
// carry the recipe's loss gap. Read from the records' "ablation" object (docs/results-schema.md).
//
// Per seed s, with B the baseline's final eval loss, A the ablated recipe's ("all" arm), X_i the
// run with layer i alone in high precision ("all_but") and O_i the run with layer i alone in FP8
// ("only"), as paired relative differences (experiments/stats/paired_statistics.hpp):
//   gap        g_s = (A - B) / B
//   removed    r_s = (A - X_i) / B    the part of the gap that leaves with layer i
//   alone      o_s = (O_i - B) / B    the gap layer i makes by itself
// share_removed = mean(r) / mean(g), share_alone = mean(o) / mean(g); a layer's share is their
// mean (either one alone where only one arm ran), and the ranking is by share, largest first.
// Interactions make the two shares differ (two layers that each suffice to break the run both
// show a small removed share and a large alone share); both are shown.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/paired_statistics.hpp"

namespace fp8lab::experiments {

struct AblationRow {
  std::string layer;
  std::string gemm;                     // "all" for the whole layer, else fprop, dgrad or wgrad
  std::optional<MeanInterval> removed;  // r_s over the seeds with A, X_i and B
  std::optional<MeanInterval> alone;    // o_s over the seeds with O_i and B
  std::optional<double> share_removed, share_alone;
  double share = 0.0;
};

struct AblationTable {
  std::string workload;
  std::string base_recipe;   // the ablated recipe's canonical string
  std::string recipe_label;  // of its "all" arm's record
  std::optional<MeanInterval> gap;
  // The workload's chaos floor (chaos_floor.hpp: null runs' paired tail error) beside the gap;
  // empty without null runs.
  std::string chaos_floor;
  std::vector<AblationRow> layers;  // gemm "all", ranked
  std::vector<AblationRow> gemms;   // per GEMM (per_gemm sweeps), ranked
  std::vector<std::string> notes;   // seeds left out and why
};

// One table per (workload, ablated recipe) found in `records`, in order of first appearance.
std::vector<AblationTable> ablation_tables(const std::vector<RunRecord>& records);

// The Markdown section (empty when no record is an ablation run).
std::string ablation_markdown(const std::vector<AblationTable>& tables);

}  // namespace fp8lab::experiments
