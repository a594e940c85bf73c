// Bulk quantize: the hot loop of every scaling recipe. q[i] = cast(RN(x[i] * scale)), fused with
// amax of the unscaled input (NaN ignored, as CUDA's fmaxf: amax_update) and the statistics
// reports need. Vectorized with Highway (runtime dispatch: SSSE3 / SSE4 / AVX2 / AVX-512);
// bit-identical to the reference:: loops over the scalar casts of sim/cast.hpp, which
// tests/sim/quantize_bulk_test.cpp (every target) and quantize_bulk_exhaustive_test (2^32) check.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "sim/cast.hpp"
#include "sim/format.hpp"

namespace fp8lab::sim {

// One step of amax: max(current, |x|) with every NaN x ignored, signalling NaNs included. This is
// what "fmaxf, NaN ignored" (docs/numerics.md §2) means and what CUDA's fmaxf does; glibc's std::fmax
// instead returns NaN when an argument is a signalling NaN (IEEE 754-2008 maxNum), so a loop of
// std::fmax over raw inputs is not this function. `current` must not be NaN.
inline float amax_update(float current, float x) {
  const float magnitude = std::fabs(x);              // sign cleared, payload kept: NaN stays NaN
  return magnitude > current ? magnitude : current;  // false for NaN: ignored
}

// What happened to the elements of one quantize call. Counts are over input elements.
struct QuantizeStats {
  float amax = 0.0f;        // max |x| over non-NaN x (0 if none); +Inf if any x is ±Inf
  std::uint64_t count = 0;  // elements quantized
  // y = RN(x * scale) hit the cast's overflow rule: y is ±Inf, or rounding |y| (RNE, or the
  // stochastic rounding with the element's random bits) gives a magnitude above max finite. The
  // code is then ±max, ±Inf or NaN as the overflow mode says. A y that rounds down to ±max
  // (E4M3: 448 < |y| <= 464) is an ordinary rounding, not counted.
  std::uint64_t saturated = 0;
  std::uint64_t underflowed = 0;  // x != 0 and not NaN, but the code is ±0
  // codes that are NaN: NaN y (NaN x, or ±Inf * 0), E4M3 overflow under nosat, E4M3 ±Inf under
  // sat_keep_inf
  std::uint64_t nan = 0;

  // Merges the statistics of another part of the same tensor (amax as amax_update, counts added).
  void merge(const QuantizeStats& other);
};

// The bulk quantizers' signatures, declared once: the fast paths below and their definitions in
// reference:: (tests compare them byte for byte) are functions of these types.
//
// fp32 input, round-to-nearest-even. out.size() must equal x.size() and format must be E4M3 or
// E5M2, else std::invalid_argument names the mismatch.
using QuantizeFp32 = QuantizeStats(std::span<const float> x, float scale, Format format,
                                   Overflow mode, std::span<std::uint8_t> out);
// bf16 input (raw bits), through its exact fp32 value.
using QuantizeBf16 = QuantizeStats(std::span<const std::uint16_t> x, float scale, Format format,
                                   Overflow mode, std::span<std::uint8_t> out);
// Stochastic rounding: element i uses the random word philox_block_word(seed, stream,
// first_index + i) (sim/rng.hpp: word (first_index + i) & 3 of one Philox block per four
// elements), so a tensor split into parts starting at any index (or into GPU threads) draws the
// same bits.
using QuantizeStochastic = QuantizeStats(std::span<const float> x, float scale, Format format,
                                         Overflow mode, std::uint64_t seed, std::uint64_t stream,
                                         std::uint64_t first_index, std::span<std::uint8_t> out);

QuantizeFp32 quantize;
QuantizeBf16 quantize_bf16;
QuantizeStochastic quantize_stochastic;

// max |x| over non-NaN elements (amax_update), 0 for an empty or all-NaN span.
float amax(std::span<const float> x);
float amax_bf16(std::span<const std::uint16_t> x);

// Name of the SIMD target (Highway) the bulk paths dispatch to on this CPU, e.g. "AVX2", for
// benchmark and test reports.
const char* bulk_target_name();

// The definition of every function above: one loop over the scalar casts of sim/cast.hpp per
// element, no vectorization. The bulk paths are tested byte for byte against these.
namespace reference {
QuantizeFp32 quantize;
QuantizeBf16 quantize_bf16;
QuantizeStochastic quantize_stochastic;
}  // namespace reference

}  // namespace fp8lab::sim
