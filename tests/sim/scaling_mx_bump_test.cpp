// Su et al. 2025's "exponent bump" (their microxcaling fork, mx_ops.py _quantize_mx with
// bump_up_overflow_exponent; E4M3 only) is not a sixth E8M0 mode: it is rceil. The bump takes
// the floor code (OCP: E(amax) - emax) and adds one when the block maximum would clip, i.e. when
// amax > 1.75 * 2^E(amax) (E4M3's largest value is 1.75 * 2^8). rceil rounds amax / 448 up to a
// power of two, which is the same code. Checked over every fp32 mantissa of several binades:
//   - torchao-main's rceil gives the bump's code for every amax;
//   - torchao-0.18's rceil (fp32 log2) differs only for amax just above 1.75 * 2^E, where its
//     fp32 log2 of amax / 448 rounds down onto the integer (sim/scaling/mx.hpp): the band is as wide
//     as half an ulp of that log2, 4 mantissas at 2^0 and 2^20, 39 at 2^-100 (|log2| near 108).
// So recipes write the bump as mx_scale_mode: rceil (recipes/sweeps/literature/L3-*.yaml).
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

#include "sim/scaling/mx.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;

namespace {

// The bump, stated from its definition rather than from any mode: floor's code, plus one when the
// block maximum exceeds 1.75 * 2^E(amax). For normal amax only.
std::uint8_t bump_code(float amax) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(amax);
  const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127;  // E(amax), exact
  const std::uint32_t mantissa = bits & 0x7FFFFF;
  const std::uint32_t mantissa_of_1_75 = 0x600000;  // 1.75 = 1.11b: 0b11 << 21
  const int floor_code = exponent - 8 + 127;        // emax(E4M3) = 8
  return static_cast<std::uint8_t>(floor_code + (mantissa > mantissa_of_1_75 ? 1 : 0));
}

}  // namespace

TEST_CASE("the exponent bump is rceil: torchao-main on every mantissa, 0.18 but for a few") {
  for (const int exponent : {-100, -3, 0, 20}) {
    std::int64_t main_differs = 0, v0_18_differs = 0, floor_differs = 0;
    const std::uint32_t top = static_cast<std::uint32_t>(exponent + 127) << 23;
    for (std::uint32_t m = 0; m < (1u << 23); ++m) {
      const float amax = std::bit_cast<float>(top | m);
      const std::uint8_t bump = bump_code(amax);
      main_differs += mx_scale_code(amax, Format::E4M3, E8M0Mode::kRceil, TorchaoVersion::kMain) !=
                      bump;
      const std::uint8_t v0_18 =
          mx_scale_code(amax, Format::E4M3, E8M0Mode::kRceil, TorchaoVersion::kV0_18);
      if (v0_18 != bump) {
        ++v0_18_differs;
        // Only just above the clipping threshold, and one code below the bump.
        INFO("exponent " << exponent << ", mantissa 0x" << std::hex << m);
        CHECK(m > 0x600000);
        CHECK(m <= 0x600000 + 64);
        CHECK(v0_18 + 1 == bump);
      }
      floor_differs += mx_scale_code(amax, Format::E4M3, E8M0Mode::kFloor) != bump;
    }
    INFO("exponent " << exponent);
    CHECK(main_differs == 0);
    // The band of mantissas 0x600001 .. 0x600000 + v0_18_differs (each checked above to lie
    // within 0x600000 + 64): at most 2^-17 relative above the threshold.
    CHECK(v0_18_differs <= 64);
    if (exponent == 0 || exponent == 20) CHECK(v0_18_differs <= 4);
    // Guard: floor is not the bump; exactly the mantissas above 1.75 differ (0x600001..0x7FFFFF).
    CHECK(floor_differs == (1 << 23) - 0x600001);
  }
}
