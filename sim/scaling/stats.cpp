#include "sim/scaling/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"

namespace fp8lab::sim::scaling {

std::vector<float> dequantize(const QuantizedTensor& t) {
  t.check_shape("dequantize");
  std::vector<float> out(t.data.size());
  for (std::int64_t r = 0; r < t.rows; ++r) {
    for (std::int64_t c = 0; c < t.cols; ++c) {
      out[static_cast<std::size_t>(r * t.cols + c)] =
          decode_fp8(t.code_at(r, c), t.format) * t.scale_inv_at(r, c);
    }
  }
  return out;
}

namespace {

const std::array<float, 256>& decode_table(Format format) {
  static const auto make = [](Format f) {
    std::array<float, 256> table{};
    for (int code = 0; code < 256; ++code) {
      table[static_cast<std::size_t>(code)] = decode_fp8(static_cast<std::uint8_t>(code), f);
    }
    return table;
  };
  static const std::array<float, 256> e4m3 = make(Format::E4M3);
  static const std::array<float, 256> e5m2 = make(Format::E5M2);
  if (format == Format::E4M3) return e4m3;
  if (format == Format::E5M2) return e5m2;
  throw std::invalid_argument("sqnr_sums: not an FP8 element format");
}

}  // namespace

double SqnrSums::db() const {
  if (elements == 0) return std::numeric_limits<double>::quiet_NaN();
  if (noise == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

double SqnrSums::mse() const {
  if (elements == 0) return std::numeric_limits<double>::quiet_NaN();
  return noise / static_cast<double>(elements);
}

void SqnrSums::add(const SqnrSums& other) {
  elements += other.elements;
  signal += other.signal;
  noise += other.noise;
}

SqnrSums sqnr_sums(std::span<const float> x, const QuantizedTensor& q) {
  if (x.size() != q.data.size()) {
    throw std::invalid_argument("sqnr_sums: x.size() = " + std::to_string(x.size()) +
                                " but the quantized tensor has " + std::to_string(q.data.size()) +
                                " elements");
  }
  // x̂ = RN(decode(q) * scale_inv), as dequantize, block row by block row.
  const std::array<float, 256>& decode = decode_table(q.format);
  const std::int64_t scale_cols = q.scale_cols();
  SqnrSums sums;
  for (std::int64_t r = 0; r < q.rows; ++r) {
    const float* scale_row = q.scale_inv.data() + (r / q.block_rows) * scale_cols;
    const float* x_row = x.data() + r * q.cols;
    const std::uint8_t* q_row = q.data.data() + r * q.cols;
    for (std::int64_t c0 = 0; c0 < q.cols; c0 += q.block_cols) {
      const float scale_inv = scale_row[c0 / q.block_cols];
      const std::int64_t c1 = std::min(q.cols, c0 + q.block_cols);
      for (std::int64_t c = c0; c < c1; ++c) {
        const float value = x_row[c];
        const float dequantized = decode[q_row[c]] * scale_inv;
        if (!std::isfinite(value) || !std::isfinite(dequantized)) continue;
        const double error = static_cast<double>(value) - static_cast<double>(dequantized);
        sums.signal += static_cast<double>(value) * static_cast<double>(value);
        sums.noise += error * error;
        ++sums.elements;
      }
    }
  }
  return sums;
}

double MomentSums::kurtosis() const {
  if (elements < 2) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(elements);
  const double mean = s1 / n;
  // Central moments from the raw ones (binomial expansion of E[(x - mean)^k]).
  const double m2 = s2 / n - mean * mean;
  const double m4 = s4 / n - 4.0 * mean * (s3 / n) + 6.0 * mean * mean * (s2 / n) -
                    3.0 * mean * mean * mean * mean;
  if (!(m2 > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  return m4 / (m2 * m2);
}

void MomentSums::add(const MomentSums& other) {
  elements += other.elements;
  s1 += other.s1;
  s2 += other.s2;
  s3 += other.s3;
  s4 += other.s4;
}

MomentSums moment_sums(std::span<const float> x) {
  MomentSums sums;
  for (const float value : x) {
    if (!std::isfinite(value)) continue;
    const double v = value;
    const double v2 = v * v;
    sums.s1 += v;
    sums.s2 += v2;
    sums.s3 += v2 * v;
    sums.s4 += v2 * v2;
    ++sums.elements;
  }
  return sums;
}

double max_block_dynamic_range_log2(std::span<const float> x, const QuantizedTensor& q) {
  q.check_shape("max_block_dynamic_range_log2");
  if (x.size() != q.data.size()) {
    throw std::invalid_argument("max_block_dynamic_range_log2: x.size() = " +
                                std::to_string(x.size()) + " but the quantized tensor has " +
                                std::to_string(q.data.size()) + " elements");
  }
  // Per block: the largest and smallest finite nonzero |x| (blocks in scale_inv's layout).
  const std::size_t blocks = q.scale_inv.size();
  std::vector<float> largest(blocks, 0.0f);
  std::vector<float> smallest(blocks, std::numeric_limits<float>::infinity());
  const std::int64_t scale_cols = q.scale_cols();
  for (std::int64_t r = 0; r < q.rows; ++r) {
    for (std::int64_t c = 0; c < q.cols; ++c) {
      const float magnitude = std::fabs(x[static_cast<std::size_t>(r * q.cols + c)]);
      if (!std::isfinite(magnitude) || magnitude == 0.0f) continue;
      const auto b = static_cast<std::size_t>((r / q.block_rows) * scale_cols + c / q.block_cols);
      largest[b] = std::max(largest[b], magnitude);
      smallest[b] = std::min(smallest[b], magnitude);
    }
  }
  double widest = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (largest[b] == 0.0f) continue;  // no finite nonzero input
    widest = std::max(widest, std::log2(static_cast<double>(largest[b])) -
                                  std::log2(static_cast<double>(smallest[b])));
  }
  return widest;
}

TensorStats tensor_stats(std::span<const float> x, const QuantizeResult& q) {
  if (x.size() != q.tensor.data.size()) {
    throw std::invalid_argument("tensor_stats: x.size() = " + std::to_string(x.size()) +
                                " but the quantized tensor has " +
                                std::to_string(q.tensor.data.size()) + " elements");
  }
  TensorStats s;
  s.amax = q.stats.amax;
  s.count = q.stats.count;
  s.saturated = q.stats.saturated;
  s.underflowed = q.stats.underflowed;
  s.nan = q.stats.nan;

  s.scale_min = std::numeric_limits<float>::infinity();
  s.scale_max = -std::numeric_limits<float>::infinity();
  for (const float v : q.tensor.scale) {
    s.scale_min = std::fmin(s.scale_min, v);  // fmin/fmax skip NaN scales
    s.scale_max = std::fmax(s.scale_max, v);
  }

  const std::vector<float> xhat = dequantize(q.tensor);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    switch (std::fpclassify(v)) {
      case FP_NAN: ++s.input_nan; break;
      case FP_INFINITE: ++s.input_inf; break;
      case FP_ZERO: ++s.input_zero; break;
      case FP_SUBNORMAL: ++s.input_denormal; break;
      default: break;
    }
    if (!std::isfinite(v) || !std::isfinite(xhat[i]) || v == 0.0f) continue;
    const double exact = v;
    const double error = exact - static_cast<double>(xhat[i]);
    s.max_rel_error = std::max(s.max_rel_error, std::fabs(error / exact));
  }
  s.sqnr_db = sqnr_sums(x, q.tensor).db();
  return s;
}

}  // namespace fp8lab::sim::scaling
