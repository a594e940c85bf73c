#include "experiments/fp8/linear_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {

double OperandStats::sqnr_db() const {
  return sim::scaling::SqnrSums{sqnr_elements, signal_energy, noise_energy}.db();
}

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
  count += other.count;
  saturated += other.saturated;
  underflowed += other.underflowed;
  nan += other.nan;
  sqnr_elements += other.sqnr_elements;
  signal_energy += other.signal_energy;
  noise_energy += other.noise_energy;
}

OperandStats measure_quantization(ConstMatrix x, const sim::scaling::QuantizeResult& result) {
  const sim::QuantizedTensor& q = result.tensor;
  if (q.rows != x.rows || q.cols != x.cols ||
      x.data.size() != static_cast<std::size_t>(x.rows * x.cols)) {
    throw std::invalid_argument("measure_quantization: input [" + std::to_string(x.rows) + ", " +
                                std::to_string(x.cols) + "] does not match the quantized tensor [" +
                                std::to_string(q.rows) + ", " + std::to_string(q.cols) + "]");
  }
  OperandStats stats;
  stats.quantizations = 1;
  stats.amax = result.stats.amax;
  stats.count = result.stats.count;
  stats.saturated = result.stats.saturated;
  stats.underflowed = result.stats.underflowed;
  stats.nan = result.stats.nan;
  stats.scale_min = std::numeric_limits<float>::infinity();
  stats.scale_max = -std::numeric_limits<float>::infinity();
  for (const float s : q.scale) {
    stats.scale_min = std::fmin(stats.scale_min, s);  // fmin/fmax drop NaN
    stats.scale_max = std::fmax(stats.scale_max, s);
  }
  // The SQNR's sums as sim computes them (sim::scaling::sqnr_sums, TE's dequantization).
  const sim::scaling::SqnrSums sums = sim::scaling::sqnr_sums(x.data, q);
  stats.sqnr_elements = sums.elements;
  stats.signal_energy = sums.signal;
  stats.noise_energy = sums.noise;
  return stats;
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
  for (std::size_t t = 0; t < 3; ++t) {
    for (std::size_t r = 0; r < 3; ++r) operands[t][r].merge(other.operands[t][r]);
  }
  for (std::size_t r = 0; r < 3; ++r) {
    fp8_gemms[r] += other.fp8_gemms[r];
    high_precision_gemms[r] += other.high_precision_gemms[r];
    gemm_seconds[r] += other.gemm_seconds[r];
  }
  quantize_seconds += other.quantize_seconds;
}

}  // namespace fp8lab::experiments
