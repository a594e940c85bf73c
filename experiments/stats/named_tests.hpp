// The named tests behind every verdict and contrast word (issue 31 §1-3), each a stated test at
// the sweep's alpha and band b on the paired mean d of n seeds (paired_statistics.hpp), and the
// Holm-Bonferroni adjustment over a report's family of them. No JSON, no LibTorch.
//
// The words, and the test each one states (t with n - 1 degrees of freedom, se = sd / sqrt(n)):
//   worse beyond band  two-sided t-test of "mean = +b" rejects at alpha, mean > b: the (1 - alpha)
//                      interval's lower bound > b; p = 2 P(T > (mean - b) / se)
//   equivalent         TOST, the two one-sided tests of "mean <= -b" and "mean >= +b", both reject
//                      at alpha: the (1 - 2 alpha) interval lies inside (-b, +b); p = the larger
//                      of the two one-sided p-values
//   worse / better     two-sided t-test of "mean = 0" rejects at alpha: the (1 - alpha) interval's
//                      lower bound > 0 / upper bound < 0; p = 2 P(T > |mean| / se)
//   not worse          one-sided test of "mean >= +b" rejects at alpha (non-inferiority): the
//                      one-sided (1 - alpha) upper bound, i.e. the (1 - 2 alpha) interval's upper
//                      bound, <= b; p = P(T > (b - mean) / se)
//   inconclusive       none of them: the test shown is the one of these four (beyond band,
//                      TOST, mean = 0, non-inferiority) with the smallest p, with its interval
// When several hold, the first in this order names the verdict (a small resolved difference
// inside the band is `equivalent`: it exists and does not matter at this band).
// Identical values (sd 0): the t statistics are infinite, so each test is the exact sign test of
// the same hypothesis ("sign TOST", ...): p = 0.5^n one-sided, 2 x 0.5^n two-sided (all n values
// on the rejecting side), the interval [d, d]; the same words in the same order.
//
// Power: mde80 is the smallest |mean| that the two-sided t-test of "mean = 0" detects with 80%
// power at this n, sd and alpha (exact, noncentral t; the band test detects b + mde80 with the
// same power). seeds_for_80 is the power of the row's settling test at the band (issue 41 item 5),
// never of the test against 0: the seeds at which it has 80% power for the observed mean and sd.
// The settling test (power_test) is the verdict's own test where that is at the band (TOST for
// `equivalent`, exact: tost_power; the one-sided test against +b for `not worse`:
// non_inferiority_power; the test of mean = +b for `worse beyond band`), and for worse, better
// and inconclusive the test at the band that can settle the row at its mean: TOST for
// -b < mean < b, non-inferiority for mean <= -b, the test of mean = +b for mean >= b. Identical
// values (sign tests): the smallest n whose exact p is below alpha; none where the values cannot
// reject.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "experiments/stats/paired_statistics.hpp"

namespace fp8lab::experiments {

struct NamedTest {
  std::string verdict;  // the word (above)
  std::string test;     // which test: "t-test mean=+b", "TOST", "t-test mean=0", "non-inferiority"
  double estimate = 0;  // the mean paired difference
  double ci_low = 0, ci_high = 0;
  double ci_level = 0;  // the level of the two-sided interval the test used
  double p_raw = 1;     // the test's p-value (above)
  double alpha = kDefaultAlpha;
  double mde80 = 0;
  std::optional<std::size_t> seeds_for_80;
  std::string power_test;  // the settling test seeds_for_80 is the power of (above)
  // Multiplicity (holm_over): the row's family, its size and the Holm-adjusted p.
  std::string family;  // "confirmatory" (pre-registered in the sweep's hypotheses) or "exploratory"
  std::size_t family_size = 0;
  double p_holm = 1;
  // Whether the verdict's test still rejects after the family's correction (inconclusive: false).
  bool holds_after_holm() const;
};

// The named test of the interval's mean against the band at alpha.
NamedTest named_test(const MeanInterval& interval, double band, double alpha);

// The named test of a contrast, oriented so that its mean is >= 0 (contrasts.hpp): only the words
// such a mean can get, in the same order: worse beyond band, equivalent, worse, inconclusive.
// `better` and `not worse` are not candidates (with mean >= 0 the non-inferiority p is TOST's p,
// so TOST settles first); an inconclusive one shows the closest of the other three tests.
// Throws std::invalid_argument for a mean < 0.
NamedTest oriented_named_test(const MeanInterval& interval, double band, double alpha);

// Only the two-sided test of "mean = 0" (no band): worse (mean > 0), better (mean < 0) or
// inconclusive, for differences that have no practical band (the probes' gradient errors,
// probe_pairs.hpp).
NamedTest difference_test(const MeanInterval& interval, double alpha);

// Holm-Bonferroni adjusted p-values, in the input's order: sorted ascending, the i-th (from 0) is
// max over j <= i of min(1, (m - j) p_(j)).
std::vector<double> holm_adjusted(const std::vector<double>& p);

// One line per word, the test it states at this band and alpha, and the multiplicity and power
// lines: the legend every report prints (computed here once; the renderers only render it).
std::vector<std::string> named_test_legend(double band, double alpha);

// "worse", "worse beyond band", ...: lower is better; failed and diverged (not tests) after all.
int paired_verdict_rank(const std::string& verdict);

// A test's figures as the report tables show them ("-" without a test).
struct TestCells {
  std::string test;           // "TOST, 90% CI [-0.12%, +0.2%]"
  std::string p_raw, p_holm;  // "0.012", "0.048 (exploratory, 14)"
  std::string mde80, seeds_for_80;
};
TestCells test_cells(const std::optional<NamedTest>& test);

// "p 0.012, Holm 0.048 (exploratory family of 14)".
std::string describe_p_values(const NamedTest& test);
// "p Holm 0.21 > alpha 0.05: not significant after the correction for its family of 14" for a
// verdict other than inconclusive that does not hold after Holm; "" otherwise.
std::string holm_note(const NamedTest& test);
// "worse (reason; holm note)": a verdict with its reason and the test's Holm note, each if any.
std::string verdict_with_reasons(const std::string& verdict, const std::string& reason,
                                 const std::optional<NamedTest>& test);

}  // namespace fp8lab::experiments
