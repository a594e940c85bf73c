// Contrasts between recipes on the same seed (issue 20 §2): E5M2 vs E4M3, floor vs rceil,
// tensorwise vs rowwise. Two FP8 recipes on one seed share initialization, data order and most
// of the perturbation, so their difference can be tighter than either one's difference from
// the baseline, where their errors move together across seeds; measured, it often is not (the
// default sweep's kept records: contrasts' sd 0.21%, rows' 0.156%). No LibTorch.
//
// Pairs: two recipe rows of one baseline family whose sweep settings differ in exactly one
// (`source.combinations`: what the sweep varied; scaling changes the defaults of other fields,
// so tensorwise vs rowwise is one contrast), or, for runs from no sweep, whose recipes differ in
// exactly one field. Per
// common seed on which both finished, d_s = (tail A - tail B) / tail B, the tail being the mean
// eval loss over the last 10% of eval points (paired_verdicts.hpp); over seeds, the named test of
// the mean of d against the band at the sweep's alpha. Oriented so that the mean is >= 0: A is the
// recipe with the higher loss, so the words are those of oriented_named_test (named_tests.hpp):
// worse beyond band, equivalent, worse, inconclusive; never `better` or `not worse`. Fewer than 3
// common seeds: inconclusive, without a test.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/named_tests.hpp"
#include "experiments/stats/paired_statistics.hpp"
#include "experiments/stats/recipe_rows.hpp"

namespace fp8lab::experiments {

// "scaling=rowwise fp8_format=E4M3" as field -> value.
std::map<std::string, std::string> label_settings(const std::string& label);
// Every combination a sweep run stands for (its provenance `source.combinations`), as settings;
// empty for a run from no sweep.
std::vector<std::map<std::string, std::string>> asked_combinations(const RunRecord& record);

struct Contrast {
  const RecipeRow* worse = nullptr;   // A: the higher mean loss
  const RecipeRow* better = nullptr;  // B
  std::string field;                  // the one recipe field they differ in
  std::string worse_value, better_value;
  std::vector<std::int64_t> seeds;  // common finished seeds
  std::optional<MeanInterval> interval;
  std::optional<NamedTest> test;  // with >= 3 common seeds
  std::string verdict;            // test->verdict, or "inconclusive" without a test
  std::string reason;             // "2 common seeds; a test needs 3", power_reason
  bool resolved() const { return verdict != "inconclusive"; }
  // The verdict with its reason and the family's correction: "worse (p Holm 0.21 > alpha ...)".
  std::string verdict_text() const;
  // "fp8_format E5M2 vs E4M3 (scaling current, ...)": what is compared.
  std::string title() const;
};

// Every contrast among the rows, in the rows' order of the first recipe.
std::vector<Contrast> recipe_contrasts(const std::vector<RecipeRow>& rows, double band,
                                       double alpha = kDefaultAlpha);

// What a sweep of this size can resolve, per baseline family.
struct Resolution {
  std::string family;
  std::size_t typical_seeds = 0;      // median seeds with a paired error over the family's rows
  std::optional<double> typical_sd;   // median sd of their tail errors vs the baseline
  std::optional<double> vs_baseline;  // mde80 at those seeds and sd (named_tests.hpp)
  std::optional<double> contrast_sd;  // median sd of the contrasts' differences
  std::optional<double> contrast;     // mde80 of a contrast at those seeds and sd
  // The eval set's sampling error (eval_sampling_error.hpp), medians over the family's rows:
  // of one seed's paired error, and of one eval loss.
  std::optional<double> paired_eval_se;
  std::optional<double> unpaired_eval_se;
  std::size_t rows_resolved = 0, rows = 0;  // rows with a verdict other than inconclusive
  std::size_t contrasts_resolved = 0, contrasts = 0;
  // Of those, the ones whose test holds after the family's Holm correction (holds_after_holm;
  // the counts above are at raw alpha).
  std::size_t rows_held = 0, contrasts_held = 0;
};
// " The eval set's own sampling error of one seed's paired error: ±0.04% (...), 6x below the
// 0.25% band." with a leading space; empty when the records keep no per-window losses.
std::string describe_eval_sampling_error(const Resolution& resolution, double band);

std::vector<Resolution> sweep_resolution(const std::vector<RecipeRow>& rows,
                                         const std::vector<Contrast>& contrasts, double alpha);

// The "what this sweep can resolve" line of one family, in words (the renderers print it): the
// rows and contrasts whose verdict holds after Holm, then the same at raw alpha.
std::string describe_resolution(const Resolution& resolution, double band, double alpha);

}  // namespace fp8lab::experiments
