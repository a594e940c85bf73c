#include "sim/scaling/current.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace fp8lab::sim::scaling {

float te_round_scale_down_to_power_of_2(float scale) {
  // s.eeeeeeee.mmm...m -> s.eeeeeeee.000...0
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(scale) & 0xFF80'0000u);
}

float te_scale_from_amax(float amax, float fp8_max, bool pow2, float eps, float value_for_inf) {
  if (amax < eps) amax = eps;
  if (std::isinf(amax) || amax == 0.0f || std::isnan(amax)) return 1.0f;
  float s = fp8_max / amax;
  if (std::isinf(s)) s = value_for_inf;
  if (pow2) s = te_round_scale_down_to_power_of_2(s);
  return s;
}

float torchao_round_scale_down_to_power_of_2(float scale) {
  return std::exp2(std::floor(torch_log2_f32(scale)));
}

float torchao_scale_from_amax(float amax, float fp8_max, bool pow2) {
  constexpr double kEps = 1e-12;  // torchao float8_utils.py EPS
  const double a = static_cast<double>(amax);
  const double clamped = std::isnan(a) ? a : std::fmax(a, kEps);
  auto s = static_cast<float>(static_cast<double>(fp8_max) / clamped);
  if (pow2) s = torchao_round_scale_down_to_power_of_2(s);
  return s;
}

QuantizeResult quantize_per_tensor(const char* function, std::span<const float> x,
                                   std::int64_t rows, std::int64_t cols, Format format,
                                   float scale) {
  check_tensor_arguments(function, x.size(), rows, cols, format);
  QuantizeResult result;
  QuantizedTensor& t = result.tensor;
  t.rows = rows;
  t.cols = cols;
  t.format = format;
  t.block_rows = rows;
  t.block_cols = cols;
  t.data.resize(x.size());
  t.scale = {scale};
  t.scale_inv = {1.0f / scale};
  result.stats = quantize(x, scale, format, Overflow::kSatFinite, t.data);
  return result;
}

QuantizeResult quantize_current_te(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Format format, bool pow2, float eps,
                                   const AmaxReducer& reduce) {
  check_tensor_arguments("quantize_current_te", x.size(), rows, cols, format);
  float a = amax(x);
  if (reduce) reduce(std::span<float>(&a, 1));
  const float s = te_scale_from_amax(a, fp8_max(format), pow2, eps,
                                     std::numeric_limits<float>::max());
  return quantize_per_tensor("quantize_current_te", x, rows, cols, format, s);
}

QuantizeResult quantize_tensorwise_torchao(std::span<const float> x, std::int64_t rows,
                                           std::int64_t cols, Format format, bool pow2,
                                           const AmaxReducer& reduce) {
  check_tensor_arguments("quantize_tensorwise_torchao", x.size(), rows, cols, format);
  float a = amax_nan_propagating(x);
  if (reduce) reduce(std::span<float>(&a, 1));
  const float s = torchao_scale_from_amax(a, fp8_max(format), pow2);
  return quantize_per_tensor("quantize_tensorwise_torchao", x, rows, cols, format, s);
}

}  // namespace fp8lab::sim::scaling
