// The scalar definition of sim/quantize.hpp: one call of the sim/cast.hpp casts per element.
// Slow on purpose; the vectorized paths in sim/quantize.cpp are proven equal to it by tests.
#include <cmath>

#include "sim/quantize.hpp"
#include "sim/quantize_arguments.hpp"
#include "sim/rng.hpp"

namespace fp8lab::sim::reference {
namespace {

// Adds one element to `stats`. `nosat_code` is the same cast of y under kNoSat (same rounding,
// same random bits): its magnitude is beyond max finite exactly when the overflow rule applied.
void count_element(QuantizeStats& stats, float x, float y, std::uint8_t code,
                   std::uint8_t nosat_code, Format format) {
  const FormatSpec& f = spec(format);
  const std::uint32_t magnitude_mask = ~f.sign_mask() & 0xFFu;
  stats.amax = amax_update(stats.amax, x);
  ++stats.count;
  if (!std::isnan(y) && (nosat_code & magnitude_mask) > f.max_finite_code()) ++stats.saturated;
  if (x != 0.0f && !std::isnan(x) && (code & magnitude_mask) == 0) ++stats.underflowed;
  if (std::isnan(decode_fp8(code, format))) ++stats.nan;
}

template <typename Load>
QuantizeStats quantize_rne(std::size_t n, Load load, float scale, Format format, Overflow mode,
                           std::span<std::uint8_t> out) {
  QuantizeStats stats;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = load(i);
    const float y = x * scale;
    out[i] = cast_fp32_to_fp8(y, format, mode);
    count_element(stats, x, y, out[i], cast_fp32_to_fp8(y, format, Overflow::kNoSat), format);
  }
  return stats;
}

}  // namespace

QuantizeStats quantize(std::span<const float> x, float scale, Format format, Overflow mode,
                       std::span<std::uint8_t> out) {
  check_quantize_arguments("reference::quantize", x.size(), out.size(), format);
  return quantize_rne(
      x.size(), [x](std::size_t i) { return x[i]; }, scale, format, mode, out);
}

QuantizeStats quantize_bf16(std::span<const std::uint16_t> x, float scale, Format format,
                            Overflow mode, std::span<std::uint8_t> out) {
  check_quantize_arguments("reference::quantize_bf16", x.size(), out.size(), format);
  return quantize_rne(
      x.size(), [x](std::size_t i) { return bf16_to_fp32(x[i]); }, scale, format, mode, out);
}

QuantizeStats quantize_stochastic(std::span<const float> x, float scale, Format format,
                                  Overflow mode, std::uint64_t seed, std::uint64_t stream,
                                  std::uint64_t first_index, std::span<std::uint8_t> out) {
  check_quantize_arguments("reference::quantize_stochastic", x.size(), out.size(), format);
  QuantizeStats stats;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float y = x[i] * scale;
    const std::uint32_t random = philox_block_word(seed, stream, first_index + i);
    out[i] = cast_fp32_to_fp8_stochastic(y, format, mode, random);
    count_element(stats, x[i], y, out[i],
                  cast_fp32_to_fp8_stochastic(y, format, Overflow::kNoSat, random), format);
  }
  return stats;
}

}  // namespace fp8lab::sim::reference
