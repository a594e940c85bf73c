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
#include "sim/scaling/stats_lanes.hpp"

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

// The walk behind sqnr_sums, max_block_dynamic_range_log2 and quantization_sums: x and q's
// layout checked, then stats_lanes.hpp's walk (row by row in element order, each sum's additions
// in element order; a block's range folded in at the end of its block row).
// x̂ = RN(decode(q) * scale_inv), as dequantize.
QuantizationSums walk(unsigned measures, const char* function, std::span<const float> x,
                      const QuantizedTensor& q) {
  q.check_shape(function);
  if (x.size() != q.data.size()) {
    throw std::invalid_argument(std::string(function) + ": x.size() = " + std::to_string(x.size()) +
                                " but the quantized tensor has " + std::to_string(q.data.size()) +
                                " elements");
  }
  stats_detail::WalkInput in;
  in.x = x.data();
  in.rows = q.rows;
  in.cols = q.cols;
  in.codes = q.data.data();
  in.scale_inv = q.scale_inv.data();
  in.decode = (measures & stats_detail::kSqnr) != 0 ? decode_table(q.format, function).data()
                                                    : nullptr;
  in.block_rows = q.block_rows;
  in.block_cols = q.block_cols;
  in.scale_cols = q.scale_cols();
  return stats_detail::walk_lanes(measures, in);
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
  return walk(stats_detail::kSqnr, "sqnr_sums", quantized_domain(x, q, storage), q).sqnr;
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
  stats_detail::WalkInput in;
  in.x = x.data();
  in.rows = x.empty() ? 0 : 1;
  in.cols = static_cast<std::int64_t>(x.size());
  return stats_detail::walk_lanes(stats_detail::kMoments, in).moments;
}

double max_block_dynamic_range_log2(std::span<const float> x, const QuantizedTensor& q) {
  return walk(stats_detail::kRange, "max_block_dynamic_range_log2", x, q)
      .max_block_dynamic_range_log2;
}

QuantizationSums quantization_sums(std::span<const float> x, const QuantizedTensor& q) {
  std::vector<float> storage;
  return walk(stats_detail::kSqnr | stats_detail::kMoments | stats_detail::kRange,
              "quantization_sums", quantized_domain(x, q, storage), q);
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
