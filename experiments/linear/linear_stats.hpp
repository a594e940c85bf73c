// What an FP8 Linear measured: per quantized operand (tensor x GEMM role) the amax, the scales,
// the saturated / underflowed / NaN counts and the SQNR of the quantization, plus the time spent
// quantizing and in each GEMM. No LibTorch: the runner and reports read these as plain values.
//
// Statistics accumulate over every call until reset (merge rules below), so that a runner that
// resets at the start of a training step reads that step's figures after its backward pass.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "sim/scaling/common.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {

struct OperandStats {
  std::uint64_t quantizations = 0;  // quantize calls merged here; 0 = this operand never ran FP8
  float amax = 0.0f;                // max |x| seen (NaN ignored, fmaxf), as sim::QuantizeStats
  // Range of the multipliers s (q = cast(RN(x * s))) over the blocks of every quantization; one
  // value for per-tensor scalings. NaN-free: blocks whose s is NaN are left out.
  float scale_min = 0.0f;
  float scale_max = 0.0f;
  // The same for the dequantization factors scale_inv (TE's scale_inv_min / scale_inv_max).
  float scale_inv_min = 0.0f;
  float scale_inv_max = 0.0f;
  // sim::scaling::max_block_dynamic_range_log2, the largest over the quantizations.
  double max_block_dynamic_range_log2 = 0.0;
  std::uint64_t count = 0;      // elements quantized
  std::uint64_t saturated = 0;  // as sim::QuantizeStats
  std::uint64_t underflowed = 0;
  std::uint64_t nan = 0;
  // SQNR over elements whose input and dequantized value x̂ = RN(decode(q) * scale_inv) are
  // finite: sim::scaling::SqnrSums (sim/scaling/stats.hpp), added over the quantizations.
  std::uint64_t sqnr_elements = 0;
  double signal_energy = 0.0;
  double noise_energy = 0.0;
  // The input's power sums (sim::scaling::MomentSums), added over the quantizations.
  sim::scaling::MomentSums moments;

  // 10 log10(signal / noise) in dB; +Inf when the quantization was exact, NaN when no element
  // counted (the same value as sim::scaling::tensor_stats for a single quantization).
  double sqnr_db() const;
  // noise / sqnr_elements: the mean squared error of x̂ against x (NaN when no element counted).
  double mse() const;
  // 100 underflowed / count and 100 saturated / count, as TE's underflows% (NaN when count = 0).
  double underflow_pct() const;
  double overflow_pct() const;
  // Pearson kurtosis of the inputs pooled over the quantizations (MomentSums::kurtosis).
  double kurtosis() const { return moments.kurtosis(); }
  // amax as fmaxf, scale ranges as min/max, counts, energies and power sums added.
  void merge(const OperandStats& other);
};

// Measures one quantization of x (the [rows, cols] input of sim::scaling::QuantizeResult).
OperandStats measure_quantization(ConstMatrix x, const sim::scaling::QuantizeResult& result);

// The same in two parts: the walk's sums (sim::scaling::quantization_sums of x and result.tensor,
// x's shape checked), and the statistics from them and the result. measure_quantization(x, result)
// is measure_quantization(result, quantization_sums_of(x, result)); a caller that already holds
// the sums of the same x and an identical quantization passes those.
OperandStats measure_quantization(const sim::scaling::QuantizeResult& result,
                                  const sim::scaling::QuantizationSums& sums);
sim::scaling::QuantizationSums quantization_sums_of(ConstMatrix x,
                                                    const sim::scaling::QuantizeResult& result);

// [tensor][role]; only the pairs a Linear quantizes ever run: (input, fprop), (weight, fprop),
// (grad_output, dgrad), (weight, dgrad), (grad_output, wgrad), (input, wgrad).
using OperandTable = std::array<std::array<OperandStats, 3>, 3>;

struct LinearStats {
  OperandTable operands{};  // the run's own quantizations
  // The same tensors under each what-if recipe (what_if.hpp), in the order the run names them;
  // empty without what-if recipes. Kept in high-precision Linears too (a baseline's tensors).
  std::vector<OperandTable> what_if;
  // Per GEMM role: calls that ran FP8 (quantized operands) and high precision, and their seconds.
  std::array<std::uint64_t, 3> fp8_gemms{};
  std::array<std::uint64_t, 3> high_precision_gemms{};
  std::array<double, 3> gemm_seconds{};
  double quantize_seconds = 0.0;  // every quantize call, statistics included

  OperandStats& operand(Operand tensor, Gemm role);
  const OperandStats& operand(Operand tensor, Gemm role) const;
  double total_gemm_seconds() const;
  void merge(const LinearStats& other);
};

}  // namespace fp8lab::experiments
