// Statistics of counts (issue 31 §4): how many of n seeds met a condition (unstable, say), with
// its exact interval, and Fisher's exact test between two arms' counts. From Boost.Math
// (binomial, hypergeometric), no hand tables. docs/literature.md's L3 counts (3 of 3 against 0 of
// 3: one-sided p = 0.05) are this test. No JSON, no LibTorch.
#pragma once

#include <cstddef>

namespace fp8lab::experiments {

struct Proportion {
  double low = 0, high = 1;  // the exact (Clopper-Pearson) two-sided interval
};

// k of n with its Clopper-Pearson interval at `level` (0.95: each tail 2.5%); n >= 1, k <= n.
Proportion clopper_pearson(std::size_t k, std::size_t n, double level = 0.95);

// Fisher's exact test on the 2 x 2 table (a of n1 in arm 1, b of n2 in arm 2), from the
// hypergeometric distribution of a given the margins:
//   greater: P(X >= a), the one-sided p that arm 1's proportion is higher;
//   two-sided: the sum of P(X = x) over the tables no more likely than the observed one (with
//   scipy's relative tolerance of 1e-7 for ties).
double fisher_exact_greater(std::size_t a, std::size_t n1, std::size_t b, std::size_t n2);
double fisher_exact_two_sided(std::size_t a, std::size_t n1, std::size_t b, std::size_t n2);

}  // namespace fp8lab::experiments
