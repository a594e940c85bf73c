#include "sim/scaling/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cast.hpp"
#include "sim/decode_table.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/mx_dither.hpp"

namespace fp8lab::sim::scaling {

namespace {

// The tensor q's codes describe: x, or for an RHT copy (QuantizedTensor::rht) RHT(x), computed into
// `storage`, so that errors are measured in the domain the codes were cast in.
std::span<const float> quantized_domain(std::span<const float> x, const QuantizedTensor& q,
                                        std::vector<float>& storage) {
  if (!q.rht || x.size() != q.data.size()) return x;
  storage.resize(x.size());
  if (!q.scale_e8m0.empty()) {
    // MX with Tseng et al.'s RHT (mx_dither.hpp): 64-point chunks along K with the call's signs.
    mx_rht_bf16(x, q.rows, q.cols, q.block_rows == 1 ? ScaleAxis::kRowwise : ScaleAxis::kColumnwise,
                q.rht_signs, storage);
    return storage;
  }
  random_hadamard_transform_bf16(x, q.rows, q.cols, RhtAxis::kRows, kTeRhtSignMask, storage);
  return storage;
}

}  // namespace

std::vector<float> dequantize(const QuantizedTensor& t) {
  t.check_shape("dequantize");
  std::vector<float> out(t.data.size());
  for (std::int64_t r = 0; r < t.rows; ++r) {
    for (std::int64_t c = 0; c < t.cols; ++c) {
      out[static_cast<std::size_t>(r * t.cols + c)] = decode_element(t.code_at(r, c), t.format) *
                                                      t.scale_inv_at(r, c);
    }
  }
  return out;
}

namespace {

const std::array<float, 256>& decode_table(Format format, const char* function) {
  if (const auto* table = element_decode_table(format)) return *table;
  throw std::invalid_argument(std::string(function) +
                              ": not an element format (e4m3, e5m2, e2m1, e2m3, e3m2)");
}

// One element's share of each sum, written once for every walk below. Callers add elements in
// element order: the float64 sums are order-dependent and the tests pin them.
inline void add_sqnr(SqnrSums& sums, float value, float dequantized) {
  if (!std::isfinite(value) || !std::isfinite(dequantized)) return;
  const double error = static_cast<double>(value) - static_cast<double>(dequantized);
  sums.signal += static_cast<double>(value) * static_cast<double>(value);
  sums.noise += error * error;
  ++sums.elements;
}

inline void add_moments(MomentSums& sums, float value) {
  if (!std::isfinite(value)) return;
  const double v = value;
  const double v2 = v * v;
  sums.s1 += v;
  sums.s2 += v2;
  sums.s3 += v2 * v;
  sums.s4 += v2 * v2;
  ++sums.elements;
}

// Which sums a walk adds (a bit set, fixed at compile time so that each caller's loop holds only
// its own arithmetic).
enum Measures : unsigned { kSqnr = 1u, kMoments = 2u, kRange = 4u };

// The walk behind sqnr_sums, max_block_dynamic_range_log2 and quantization_sums: x and q row by
// row (element order), a row's blocks left to right with the block's scale_inv and its running
// largest and smallest finite nonzero |x|; at the end of a block row its blocks' ranges are
// folded into the widest. x̂ = RN(decode(q) * scale_inv), as dequantize.
template <unsigned kMeasures>
QuantizationSums walk(const char* function, std::span<const float> x, const QuantizedTensor& q) {
  q.check_shape(function);
  if (x.size() != q.data.size()) {
    throw std::invalid_argument(std::string(function) + ": x.size() = " + std::to_string(x.size()) +
                                " but the quantized tensor has " + std::to_string(q.data.size()) +
                                " elements");
  }
  const std::array<float, 256>* decode =
      (kMeasures & kSqnr) != 0 ? &decode_table(q.format, function) : nullptr;
  const std::int64_t scale_cols = q.scale_cols();
  std::vector<float> largest, smallest;  // per block of the current block row
  if constexpr ((kMeasures & kRange) != 0) {
    largest.assign(static_cast<std::size_t>(scale_cols), 0.0f);
    smallest.assign(static_cast<std::size_t>(scale_cols), std::numeric_limits<float>::infinity());
  }
  QuantizationSums sums;
  for (std::int64_t r = 0; r < q.rows; ++r) {
    const float* scale_row = q.scale_inv.data() + (r / q.block_rows) * scale_cols;
    const float* x_row = x.data() + r * q.cols;
    const std::uint8_t* q_row = q.data.data() + r * q.cols;
    for (std::int64_t b = 0; b < scale_cols; ++b) {
      const std::int64_t c0 = b * q.block_cols;
      const std::int64_t c1 = std::min(q.cols, c0 + q.block_cols);
      const float scale_inv = scale_row[b];
      float block_largest = 0.0f, block_smallest = 0.0f;
      if constexpr ((kMeasures & kRange) != 0) {
        block_largest = largest[static_cast<std::size_t>(b)];
        block_smallest = smallest[static_cast<std::size_t>(b)];
      }
      for (std::int64_t c = c0; c < c1; ++c) {
        const float value = x_row[c];
        if constexpr ((kMeasures & kSqnr) != 0) {
          add_sqnr(sums.sqnr, value, (*decode)[q_row[c]] * scale_inv);
        }
        if constexpr ((kMeasures & kMoments) != 0) add_moments(sums.moments, value);
        if constexpr ((kMeasures & kRange) != 0) {
          const float magnitude = std::fabs(value);
          if (std::isfinite(magnitude) && magnitude != 0.0f) {
            block_largest = std::max(block_largest, magnitude);
            block_smallest = std::min(block_smallest, magnitude);
          }
        }
      }
      if constexpr ((kMeasures & kRange) != 0) {
        largest[static_cast<std::size_t>(b)] = block_largest;
        smallest[static_cast<std::size_t>(b)] = block_smallest;
      }
    }
    if constexpr ((kMeasures & kRange) != 0) {
      if ((r + 1) % q.block_rows != 0 && r + 1 != q.rows) continue;  // the block row goes on
      for (std::size_t b = 0; b < largest.size(); ++b) {
        if (largest[b] != 0.0f) {  // the block holds a finite nonzero input
          sums.max_block_dynamic_range_log2 = std::max(
              sums.max_block_dynamic_range_log2, std::log2(static_cast<double>(largest[b])) -
                                                     std::log2(static_cast<double>(smallest[b])));
        }
        largest[b] = 0.0f;
        smallest[b] = std::numeric_limits<float>::infinity();
      }
    }
  }
  return sums;
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
  std::vector<float> storage;
  return walk<kSqnr>("sqnr_sums", quantized_domain(x, q, storage), q).sqnr;
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
  for (const float value : x) add_moments(sums, value);
  return sums;
}

double max_block_dynamic_range_log2(std::span<const float> x, const QuantizedTensor& q) {
  return walk<kRange>("max_block_dynamic_range_log2", x, q).max_block_dynamic_range_log2;
}

QuantizationSums quantization_sums(std::span<const float> x, const QuantizedTensor& q) {
  std::vector<float> storage;
  return walk<kSqnr | kMoments | kRange>("quantization_sums", quantized_domain(x, q, storage), q);
}

ValueRange range_without_nan(std::span<const float> values) {
  ValueRange r{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  for (const float v : values) {
    r.min = std::fmin(r.min, v);  // fmin/fmax return the other operand for a NaN
    r.max = std::fmax(r.max, v);
  }
  return r;
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

  const ValueRange scales = range_without_nan(q.tensor.scale);
  s.scale_min = scales.min;
  s.scale_max = scales.max;

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
