#include "sim/scaling/stats.hpp"

#include <algorithm>
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
  double signal = 0.0;
  double noise = 0.0;
  std::uint64_t measured = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    switch (std::fpclassify(v)) {
      case FP_NAN: ++s.input_nan; break;
      case FP_INFINITE: ++s.input_inf; break;
      case FP_ZERO: ++s.input_zero; break;
      case FP_SUBNORMAL: ++s.input_denormal; break;
      default: break;
    }
    if (!std::isfinite(v) || !std::isfinite(xhat[i])) continue;
    const double exact = v;
    const double error = exact - static_cast<double>(xhat[i]);
    signal += exact * exact;
    noise += error * error;
    ++measured;
    if (v != 0.0f) s.max_rel_error = std::max(s.max_rel_error, std::fabs(error / exact));
  }
  if (measured == 0) {
    s.sqnr_db = std::numeric_limits<double>::quiet_NaN();
  } else if (noise == 0.0) {
    s.sqnr_db = std::numeric_limits<double>::infinity();
  } else {
    s.sqnr_db = 10.0 * std::log10(signal / noise);
  }
  return s;
}

}  // namespace fp8lab::sim::scaling
