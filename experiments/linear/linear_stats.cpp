#include "experiments/linear/linear_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace fp8lab::experiments {

double OperandStats::sqnr_db() const {
  return sim::scaling::SqnrSums{sqnr_elements, signal_energy, noise_energy}.db();
}

double OperandStats::mse() const {
  return sim::scaling::SqnrSums{sqnr_elements, signal_energy, noise_energy}.mse();
}

namespace {
double percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return std::numeric_limits<double>::quiet_NaN();
  return 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}
}  // namespace

double OperandStats::underflow_pct() const { return percent(underflowed, count); }
double OperandStats::overflow_pct() const { return percent(saturated, count); }

void OperandStats::merge(const OperandStats& other) {
  if (other.quantizations == 0) return;
  if (quantizations == 0) {
    *this = other;
    return;
  }
  quantizations += other.quantizations;
  amax = std::fmax(amax, other.amax);
  scale_min = std::fmin(scale_min, other.scale_min);
  scale_max = std::fmax(scale_max, other.scale_max);
  scale_inv_min = std::fmin(scale_inv_min, other.scale_inv_min);
  scale_inv_max = std::fmax(scale_inv_max, other.scale_inv_max);
  max_block_dynamic_range_log2 =
      std::max(max_block_dynamic_range_log2, other.max_block_dynamic_range_log2);
  count += other.count;
  saturated += other.saturated;
  underflowed += other.underflowed;
  nan += other.nan;
  sqnr_elements += other.sqnr_elements;
  signal_energy += other.signal_energy;
  noise_energy += other.noise_energy;
  moments.add(other.moments);
}

sim::scaling::QuantizationSums quantization_sums_of(ConstMatrix x,
                                                    const sim::scaling::QuantizeResult& result) {
  const sim::QuantizedTensor& q = result.tensor;
  if (q.rows != x.rows || q.cols != x.cols ||
      x.data.size() != static_cast<std::size_t>(x.rows * x.cols)) {
    throw std::invalid_argument("measure_quantization: input [" + std::to_string(x.rows) + ", " +
                                std::to_string(x.cols) + "] does not match the quantized tensor [" +
                                std::to_string(q.rows) + ", " + std::to_string(q.cols) + "]");
  }
  // The SQNR's sums as sim computes them (TE's dequantization), the input's power sums and the
  // widest block range, in one walk over x and the codes (sim::scaling::quantization_sums).
  return sim::scaling::quantization_sums(x.data, q);
}

OperandStats measure_quantization(const sim::scaling::QuantizeResult& result,
                                  const sim::scaling::QuantizationSums& sums) {
  const sim::QuantizedTensor& q = result.tensor;
  OperandStats stats;
  stats.quantizations = 1;
  stats.amax = result.stats.amax;
  stats.count = result.stats.count;
  stats.saturated = result.stats.saturated;
  stats.underflowed = result.stats.underflowed;
  stats.nan = result.stats.nan;
  const auto scales = sim::scaling::range_without_nan(q.scale);
  const auto inverses = sim::scaling::range_without_nan(q.scale_inv);
  stats.scale_min = scales.min;
  stats.scale_max = scales.max;
  stats.scale_inv_min = inverses.min;
  stats.scale_inv_max = inverses.max;
  stats.max_block_dynamic_range_log2 = sums.max_block_dynamic_range_log2;
  stats.moments = sums.moments;
  stats.sqnr_elements = sums.sqnr.elements;
  stats.signal_energy = sums.sqnr.signal;
  stats.noise_energy = sums.sqnr.noise;
  return stats;
}

OperandStats measure_quantization(ConstMatrix x, const sim::scaling::QuantizeResult& result) {
  return measure_quantization(result, quantization_sums_of(x, result));
}

OperandStats& LinearStats::operand(Operand tensor, Gemm role) {
  return operands[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(role)];
}
const OperandStats& LinearStats::operand(Operand tensor, Gemm role) const {
  return operands[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(role)];
}

double LinearStats::total_gemm_seconds() const {
  return gemm_seconds[0] + gemm_seconds[1] + gemm_seconds[2];
}

void LinearStats::merge(const LinearStats& other) {
  const auto merge_table = [](OperandTable& into, const OperandTable& from) {
    for (std::size_t t = 0; t < 3; ++t) {
      for (std::size_t r = 0; r < 3; ++r) into[t][r].merge(from[t][r]);
    }
  };
  merge_table(operands, other.operands);
  if (what_if.size() < other.what_if.size()) what_if.resize(other.what_if.size());
  for (std::size_t i = 0; i < other.what_if.size(); ++i) merge_table(what_if[i], other.what_if[i]);
  for (std::size_t r = 0; r < 3; ++r) {
    fp8_gemms[r] += other.fp8_gemms[r];
    high_precision_gemms[r] += other.high_precision_gemms[r];
    gemm_seconds[r] += other.gemm_seconds[r];
  }
  quantize_seconds += other.quantize_seconds;
}

}  // namespace fp8lab::experiments
