#include "experiments/fp8/linear_stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cast.hpp"

namespace fp8lab::experiments {
namespace {

const std::array<float, 256>& decode_table(sim::Format format) {
  static const auto make = [](sim::Format f) {
    std::array<float, 256> table{};
    for (int code = 0; code < 256; ++code) {
      table[static_cast<std::size_t>(code)] = sim::decode_fp8(static_cast<std::uint8_t>(code), f);
    }
    return table;
  };
  static const std::array<float, 256> e4m3 = make(sim::Format::E4M3);
  static const std::array<float, 256> e5m2 = make(sim::Format::E5M2);
  if (format == sim::Format::E4M3) return e4m3;
  if (format == sim::Format::E5M2) return e5m2;
  throw std::invalid_argument("measure_quantization: not an FP8 element format");
}

}  // namespace

double OperandStats::sqnr_db() const {
  if (sqnr_elements == 0) return std::numeric_limits<double>::quiet_NaN();
  if (noise_energy == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal_energy / noise_energy);
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
  // x̂ = RN(decode(q) * scale_inv), TE's dequantization (as sim::scaling::dequantize), walked
  // block row by block row with a decode table: this runs on every quantize of every step.
  const std::array<float, 256>& decode = decode_table(q.format);
  const std::int64_t scale_cols = q.scale_cols();
  for (std::int64_t r = 0; r < x.rows; ++r) {
    const float* scale_row = q.scale_inv.data() + (r / q.block_rows) * scale_cols;
    const float* x_row = x.data.data() + r * x.cols;
    const std::uint8_t* q_row = q.data.data() + r * x.cols;
    for (std::int64_t c0 = 0; c0 < x.cols; c0 += q.block_cols) {
      const float scale_inv = scale_row[c0 / q.block_cols];
      const std::int64_t c1 = std::min(x.cols, c0 + q.block_cols);
      for (std::int64_t c = c0; c < c1; ++c) {
        const float value = x_row[c];
        const float dequantized = decode[q_row[c]] * scale_inv;
        if (!std::isfinite(value) || !std::isfinite(dequantized)) continue;
        const double error = static_cast<double>(value) - static_cast<double>(dequantized);
        stats.signal_energy += static_cast<double>(value) * static_cast<double>(value);
        stats.noise_energy += error * error;
        ++stats.sqnr_elements;
      }
    }
  }
  return stats;
}

OperandStats& LinearStats::operand(LinearTensor tensor, GemmRole role) {
  return operands[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(role)];
}
const OperandStats& LinearStats::operand(LinearTensor tensor, GemmRole role) const {
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
