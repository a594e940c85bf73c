// Instability as a count over seeds (issue 31 §5): per arm (each recipe row, the baselines and
// the null runs of a baseline family), how many runs met the pre-registered instability rule,
// with its exact (Clopper-Pearson, 95%) interval, and Fisher's exact test of the arm's count
// against the baselines of the same seeds and between the two recipes of each contrast
// (count_statistics.hpp). A blow-up that depends on one seed's chaotic trajectory differs between
// machines (docs/literature.md, "Across processors"); a count over seeds with its interval is the
// claim that can hold on any machine. The Fisher p-values are per comparison, outside the Holm
// families of the loss tests. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/contrasts.hpp"
#include "experiments/stats/count_statistics.hpp"
#include "experiments/stats/recipe_rows.hpp"

namespace fp8lab::experiments {

// A run that met the instability rule: status "unstable", or "diverged" (a non-finite loss, the
// rule's first clause, which keeps its older status name; recipes/instability_rule.hpp).
bool met_instability(const RunRecord& record);

struct UnstableCount {
  std::size_t unstable = 0, runs = 0;
  Proportion interval;  // Clopper-Pearson 95%; [0, 1] without runs
  // "1 of 3 [0.8%, 91%]".
  std::string text() const;
};
UnstableCount count_unstable(const std::vector<const RunRecord*>& runs);

struct ArmInstability {
  std::string family;              // the baseline family (noise_floor.hpp)
  std::string label;               // the recipe's label, "baseline" or "null"
  const RecipeRow* row = nullptr;  // the recipe row; nullptr for the baseline and null lines
  UnstableCount arm;
  UnstableCount baseline;  // the baselines of the arm's seeds (empty for the baseline line)
  // Fisher's exact test of arm against baseline (none for the baseline line or without runs):
  // two-sided, and one-sided that the arm is unstable more often.
  std::optional<double> p_two_sided, p_greater;
};

struct ContrastInstability {
  const Contrast* contrast = nullptr;
  UnstableCount a, b;  // the contrast's worse and better recipe, over all their runs
  std::optional<double> p_two_sided;
};

struct InstabilityFacts {
  // The rules the records were judged by (their `instability.description`), each once; records
  // older than the rule count non-finite losses only.
  std::vector<std::string> rules;
  std::size_t runs_without_rule = 0;
  std::vector<ArmInstability> arms;  // per family: the baseline line, the null line, the rows
  std::vector<ContrastInstability> contrasts;  // in the order of `contrasts`
  const ArmInstability* of(const RecipeRow& row) const;
  const ContrastInstability* of(const Contrast& contrast) const;
  // The rule(s) in one sentence, for the report's head.
  std::string rule_text() const;
};

InstabilityFacts instability_facts(const std::vector<RunRecord>& records,
                                   const std::vector<RecipeRow>& rows,
                                   const std::vector<Contrast>& contrasts);

}  // namespace fp8lab::experiments
