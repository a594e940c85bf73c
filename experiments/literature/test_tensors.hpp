// The tensors of the GEMM-level literature experiments (L1, L2; docs/literature.md): an operand
// pair [rows, K] per input distribution, deterministic for a seed. No LibTorch.
//
//   gaussian         A, B ~ N(0, 1): DeepSeek-V3's "two random matrices" read literally
//   nonnegative      A, B ~ |N(0, 1)|: every product positive, so the running sum grows like K
//                    and each small product meets a large accumulator (swamping)
//   activation-like  A = GeLU(N(0, 1)) with 1% of the K channels scaled 20x (outlier channels, as
//                    post-activation inputs of an MLP's second Linear look), B ~ N(0, 0.02^2)
//                    (an initialized weight). Synthetic: fp8lab does not record activations of
//                    its training runs, so this stands in for "data taken from a training run".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fp8lab::experiments::literature {

enum class Distribution : std::uint8_t { kGaussian, kNonnegative, kActivationLike };
const char* to_string(Distribution d);
const std::vector<Distribution>& all_distributions();

struct OperandPair {
  std::int64_t rows_a = 0, rows_b = 0, k = 0;
  std::vector<float> a;  // [rows_a, k] row-major
  std::vector<float> b;  // [rows_b, k] row-major
};

// The pair for one distribution; the same (distribution, rows, k, seed) always gives the same
// values (std::mt19937_64, whose output the C++ standard fixes, and our own Box-Muller).
OperandPair make_operands(Distribution d, std::int64_t rows_a, std::int64_t rows_b, std::int64_t k,
                          std::uint64_t seed);

}  // namespace fp8lab::experiments::literature
