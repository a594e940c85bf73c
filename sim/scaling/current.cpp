#include "sim/scaling/current.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/parallel.hpp"

namespace fp8lab::sim::scaling {
namespace {

std::int64_t chunk_count(std::size_t n) {
  return static_cast<std::int64_t>((n + kPerTensorChunk - 1) / kPerTensorChunk);
}

template <typename T>
std::span<T> chunk_of(std::span<T> x, std::int64_t c) {
  const auto first = static_cast<std::size_t>(c) * kPerTensorChunk;
  return x.subspan(first, std::min(kPerTensorChunk, x.size() - first));
}

// `amax_of` over x in chunks on `threads`, merged in chunk order: the first NaN chunk amax wins
// (amax_nan_propagating gives the canonical NaN), else the largest. Both amax functions are
// maxima over elements, so any split gives the whole tensor's value.
float chunked_amax(std::span<const float> x, int threads,
                   float (*amax_of)(std::span<const float>)) {
  const std::int64_t chunks = chunk_count(x.size());
  if (threads <= 1 || chunks <= 1) return amax_of(x);
  std::vector<float> parts(static_cast<std::size_t>(chunks));
  parallel_units(chunks, threads, [&](std::int64_t c) {
    parts[static_cast<std::size_t>(c)] = amax_of(chunk_of(x, c));
  });
  float a = parts[0];
  for (const float p : parts) a = std::isnan(a) ? a : std::isnan(p) ? p : std::fmax(a, p);
  return a;
}

float amax_nan_ignored(std::span<const float> x) { return amax(x); }

}  // namespace

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
                                   std::int64_t rows, std::int64_t cols, Format format, float scale,
                                   int threads) {
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
  const std::int64_t chunks = chunk_count(x.size());
  if (threads <= 1 || chunks <= 1) {
    result.stats = quantize(x, scale, format, Overflow::kSatFinite, t.data);
    return result;
  }
  std::vector<QuantizeStats> parts(static_cast<std::size_t>(chunks));
  const std::span<std::uint8_t> codes(t.data);
  parallel_units(chunks, threads, [&](std::int64_t c) {
    parts[static_cast<std::size_t>(c)] =
        quantize(chunk_of(x, c), scale, format, Overflow::kSatFinite, chunk_of(codes, c));
  });
  for (const auto& part : parts) result.stats.merge(part);
  return result;
}

QuantizeResult quantize_current_te(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Format format, bool pow2, float eps, const AmaxReducer& reduce,
                                   int threads) {
  check_tensor_arguments("quantize_current_te", x.size(), rows, cols, format);
  float a = chunked_amax(x, threads, amax_nan_ignored);
  if (reduce) reduce(std::span<float>(&a, 1));
  const float s =
      te_scale_from_amax(a, fp8_max(format), pow2, eps, std::numeric_limits<float>::max());
  return quantize_per_tensor("quantize_current_te", x, rows, cols, format, s, threads);
}

QuantizeResult quantize_tensorwise_torchao(std::span<const float> x, std::int64_t rows,
                                           std::int64_t cols, Format format, bool pow2,
                                           const AmaxReducer& reduce, int threads) {
  check_tensor_arguments("quantize_tensorwise_torchao", x.size(), rows, cols, format);
  float a = chunked_amax(x, threads, amax_nan_propagating);
  if (reduce) reduce(std::span<float>(&a, 1));
  const float s = torchao_scale_from_amax(a, fp8_max(format), pow2);
  return quantize_per_tensor("quantize_tensorwise_torchao", x, rows, cols, format, s, threads);
}

}  // namespace fp8lab::sim::scaling
