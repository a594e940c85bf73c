// Bulk quantize entry points (sim/quantize.hpp).
#include "sim/quantize.hpp"

#include <cmath>

namespace fp8lab::sim {

void QuantizeStats::merge(const QuantizeStats& other) {
  amax = std::fmax(amax, other.amax);
  count += other.count;
  saturated += other.saturated;
  underflowed += other.underflowed;
  nan += other.nan;
}

QuantizeStats quantize(std::span<const float> x, float scale, Format format, Overflow mode,
                       std::span<std::uint8_t> out) {
  return reference::quantize(x, scale, format, mode, out);
}

QuantizeStats quantize_bf16(std::span<const std::uint16_t> x, float scale, Format format,
                            Overflow mode, std::span<std::uint8_t> out) {
  return reference::quantize_bf16(x, scale, format, mode, out);
}

QuantizeStats quantize_stochastic(std::span<const float> x, float scale, Format format,
                                  Overflow mode, std::uint64_t seed, std::uint64_t stream,
                                  std::uint64_t first_index, std::span<std::uint8_t> out) {
  return reference::quantize_stochastic(x, scale, format, mode, seed, stream, first_index, out);
}

float amax(std::span<const float> x) {
  float result = 0.0f;
  for (const float v : x) result = std::fmax(result, std::fabs(v));
  return result;
}

float amax_bf16(std::span<const std::uint16_t> x) {
  float result = 0.0f;
  for (const std::uint16_t v : x) result = std::fmax(result, std::fabs(bf16_to_fp32(v)));
  return result;
}

}  // namespace fp8lab::sim
