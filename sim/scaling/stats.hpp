// The per-tensor statistics a report needs about one quantize (issue 4 item 6): what the input
// held, what the cast did to it (from QuantizeStats), and the quantization error against the
// input. Error measures are float64 and for reports only; they are not part of the bit contract.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/scaling/common.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::sim::scaling {

struct TensorStats {
  float amax = 0.0f;       // max |x|, NaN ignored (+Inf if any ±Inf)
  float scale_min = 0.0f;  // smallest and largest quantization multiplier over the blocks
  float scale_max = 0.0f;  //   (equal for per-tensor scaling; NaN blocks are skipped)
  std::uint64_t count = 0;
  std::uint64_t input_nan = 0;       // NaN inputs
  std::uint64_t input_inf = 0;       // ±Inf inputs
  std::uint64_t input_zero = 0;      // ±0 inputs
  std::uint64_t input_denormal = 0;  // fp32 subnormal inputs
  std::uint64_t saturated = 0;       // from QuantizeStats: RN(x*s) overflowed the cast (Inf too)
  std::uint64_t underflowed = 0;     // from QuantizeStats: x != 0, not NaN, code ±0
  std::uint64_t nan = 0;             // from QuantizeStats: NaN codes
  // Over elements whose input and dequantized value are both finite:
  //   sqnr_db = 10 log10(sum x^2 / sum (x - x̂)^2)   (+Inf when the error is 0, NaN when no element)
  //   max_rel_error = max |x - x̂| / |x| over those with x != 0 (0 when none)
  double sqnr_db = 0.0;
  double max_rel_error = 0.0;
};

// x̂ = decode(q) * scale_inv per element, each one fp32 multiply (TE's dequantization).
std::vector<float> dequantize(const QuantizedTensor& t);

// The sums an SQNR is made of, over the elements whose input x and dequantized value x̂ are both
// finite, in float64 and element order: signal = Σ x², noise = Σ (x - x̂)². Callers that pool
// several quantizations (experiments/linear/linear_stats) add the sums, then take db().
struct SqnrSums {
  std::uint64_t elements = 0;
  double signal = 0.0;
  double noise = 0.0;
  // 10 log10(signal / noise); +Inf when the error is 0, NaN when no element counted.
  double db() const;
  // noise / elements: the mean squared error (NaN when no element counted).
  double mse() const;
  void add(const SqnrSums& other);
};

// The sums of `q` against `x` (row-major, q's shape), walked block row by block row with a
// decode table: cheap enough to run on every quantize of a statistics step.
SqnrSums sqnr_sums(std::span<const float> x, const QuantizedTensor& q);

// The power sums a kurtosis is made of, over the finite elements, in float64 and element order:
// n, Σx, Σx², Σx³, Σx⁴. Pooled like SqnrSums (add, then kurtosis()).
struct MomentSums {
  std::uint64_t elements = 0;
  double s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0;
  // Pearson's kurtosis m4 / m2² of the pooled elements (central moments m_k = mean (x - mean)^k;
  // 3 for a Gaussian, not the excess), the outlier signal FOG watches (arXiv 2505.20524). NaN
  // when fewer than 2 elements or all equal (m2 = 0).
  double kurtosis() const;
  void add(const MomentSums& other);
};
MomentSums moment_sums(std::span<const float> x);

// The widest spread of magnitudes one scale has to cover: over the quantization blocks of `q`,
// the largest log2(max |x| / min |x|) taken over each block's finite nonzero inputs `x` (q's
// shape). 0 when no block holds two such values of different magnitude, or none at all.
double max_block_dynamic_range_log2(std::span<const float> x, const QuantizedTensor& q);

// All three measures of one quantization in one walk over `x` and `q` (q's shape, checked as
// max_block_dynamic_range_log2 does): what experiments/linear's operand statistics take from every
// quantize of a statistics step. Each sum is added in element order, as by the functions above,
// so the results equal theirs bit for bit.
struct QuantizationSums {
  SqnrSums sqnr;
  MomentSums moments;
  double max_block_dynamic_range_log2 = 0.0;
};
QuantizationSums quantization_sums(std::span<const float> x, const QuantizedTensor& q);

// The smallest and largest of `values`, NaN skipped (fmin/fmax); {+Inf, -Inf} when there is none.
// For a tensor's block scales (scale_min/scale_max) and their inverses.
struct ValueRange {
  float min = 0.0f;
  float max = 0.0f;
};
ValueRange range_without_nan(std::span<const float> values);

// Statistics of `q` (the result of quantizing `x`).
TensorStats tensor_stats(std::span<const float> x, const QuantizeResult& q);

}  // namespace fp8lab::sim::scaling
