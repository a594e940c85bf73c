// Current / tensorwise scaling (sim/scaling/current.hpp): TE's compute_scale_from_amax
// (te-accelerate.md §5.1-5.2) and torchao's amax_to_scale and power-of-2 rounding
// (torchao-mx.md §2.1-2.3), with torchao's upstream power-of-2 table.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/scaling/current.hpp"
#include "tests/sim/float_bits.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::testing;

namespace {
bool same_bits_or_both_nan(float a, float b) {
  return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b));
}
}  // namespace

TEST_CASE("TE compute_scale_from_amax: 0 / Inf / NaN give 1.0, an Inf scale gives value_for_inf") {
  for (const bool pow2 : {false, true}) {
    CHECK(te_scale_from_amax(0.0f, 448.0f, pow2, 0.0f, kFltMax) == 1.0f);
    CHECK(te_scale_from_amax(kInf, 448.0f, pow2, 0.0f, kFltMax) == 1.0f);
    CHECK(te_scale_from_amax(kNaN, 448.0f, pow2, 0.0f, kFltMax) == 1.0f);
    // The CUDA kernel is authoritative: pow2 with amax = Inf is 1.0 (TE's Python reference gives 0).
  }
  const float tiny = from_bits(0x0000'0001);  // 2^-149: 448 / tiny overflows
  CHECK(te_scale_from_amax(tiny, 448.0f, false, 0.0f, kFltMax) == kFltMax);
  CHECK(te_scale_from_amax(tiny, 448.0f, true, 0.0f, kFltMax) == std::ldexp(1.0f, 127));
  CHECK(te_scale_from_amax(tiny, 57344.0f, false, 0.0f, 12345.0f) == 12345.0f);
}

TEST_CASE("TE compute_scale_from_amax: fp32 RN division, eps clamp, mantissa-mask pow2") {
  CHECK(bits(te_scale_from_amax(3.0f, 448.0f, false, 0.0f, kFltMax)) == bits(448.0f / 3.0f));
  CHECK(te_scale_from_amax(3.0f, 448.0f, true, 0.0f, kFltMax) == 128.0f);  // 149.33 -> 2^7
  CHECK(te_scale_from_amax(1.0f, 448.0f, true, 0.0f, kFltMax) == 256.0f);  // 448 -> 2^8
  // amax < eps -> eps; an amax of 0 with eps > 0 no longer takes the 1.0 branch.
  CHECK(te_scale_from_amax(0.0f, 448.0f, false, 2.0f, kFltMax) == 224.0f);
  CHECK(te_scale_from_amax(1.0f, 448.0f, false, 2.0f, kFltMax) == 224.0f);
  CHECK(te_scale_from_amax(4.0f, 448.0f, false, 2.0f, kFltMax) == 112.0f);
  // The mask keeps sign and exponent: FLT_MAX -> 2^127, 1.5 * 2^-130 (subnormal) -> +0.
  CHECK(te_round_scale_down_to_power_of_2(kFltMax) == std::ldexp(1.0f, 127));
  CHECK(bits(te_round_scale_down_to_power_of_2(from_bits(0x0030'0000))) == 0u);
  CHECK(bits(te_round_scale_down_to_power_of_2(from_bits(0x4040'0001))) == 0x4000'0000u);
}

// torchao test/float8/test_float8_utils.py::test_round_scale_down_to_power_of_2_valid_inputs,
// the upstream (input, expected) table verbatim.
TEST_CASE("torchao _round_scale_down_to_power_of_2: upstream table") {
  struct Case {
    const char* name;
    float input;
    float expected;
  };
  const Case cases[] = {
      {"one", 1.0f, 1.0f},
      {"inf", kInf, kInf},
      {"nan", kNaN, kNaN},
      {"smallest positive subnormal number", std::ldexp(1.0f, -149), std::ldexp(1.0f, -149)},
      {"largest normal number", std::ldexp(2.0f - std::ldexp(1.0f, -23), 127), kInf},
      {"smallest positive normal number", std::ldexp(1.0f, -126), std::ldexp(1.0f, -126)},
      {"largest number less than one", 1.0f - std::ldexp(1.0f, -24), 0.5f},
      {"smallest number larger than one", 1.0f + std::ldexp(1.0f, -23), 1.0f},
  };
  for (const Case& c : cases) {
    const float got = torchao_round_scale_down_to_power_of_2(c.input);
    INFO(c.name << ": input 0x" << std::hex << bits(c.input) << " got 0x" << bits(got)
                << " expected 0x" << bits(c.expected));
    CHECK(same_bits_or_both_nan(got, c.expected));
  }
}

// torchao-mx.md §2.2 [verified]: floor(RN_f32(log2 x)) returns k for the last floats below 2^k;
// the count is 0 for k <= 2, 1 for k = 4, 2 for k = 8, 5 for k = 16, 22 for k = 64, and the
// largest float below 2^k misfires for 249 of the 253 k (normal 2^k: k = -125..127).
TEST_CASE("torchao pow2: the fp32 log2 misfire below powers of two, as the reference counts it") {
  auto misfires_below = [](int k) {
    const float p = std::ldexp(1.0f, k);
    int count = 0;
    for (float v = std::nextafter(p, 0.0f); torchao_round_scale_down_to_power_of_2(v) == p;
         v = std::nextafter(v, 0.0f)) {
      ++count;
    }
    return count;
  };
  CHECK(misfires_below(1) == 0);
  CHECK(misfires_below(2) == 0);
  CHECK(misfires_below(4) == 1);
  CHECK(misfires_below(8) == 2);
  CHECK(misfires_below(16) == 5);
  CHECK(misfires_below(64) == 22);
  int misfiring_k = 0;
  for (int k = -125; k <= 127; ++k) misfiring_k += misfires_below(k) > 0 ? 1 : 0;
  CHECK(misfiring_k == 249);
  // And it is not the mantissa mask: TE rounds these down.
  const float below_256 = std::nextafter(256.0f, 0.0f);
  CHECK(torchao_round_scale_down_to_power_of_2(below_256) == 256.0f);
  CHECK(te_round_scale_down_to_power_of_2(below_256) == 128.0f);
}

TEST_CASE("torchao amax_to_scale: float64 division, 1e-12 clamp, NaN and Inf") {
  CHECK(bits(torchao_scale_from_amax(3.0f, 448.0f, false)) ==
        bits(static_cast<float>(448.0 / 3.0)));
  CHECK(bits(torchao_scale_from_amax(0.0f, 448.0f, false)) ==
        bits(static_cast<float>(448.0 / 1e-12)));
  CHECK(bits(torchao_scale_from_amax(0.0f, 57344.0f, false)) ==
        bits(static_cast<float>(5.7344e16)));
  CHECK(std::isnan(torchao_scale_from_amax(kNaN, 448.0f, false)));
  CHECK(std::isnan(torchao_scale_from_amax(kNaN, 448.0f, true)));
  CHECK(torchao_scale_from_amax(kInf, 448.0f, false) == 0.0f);
  CHECK(torchao_scale_from_amax(kInf, 448.0f, true) == 0.0f);
  CHECK(torchao_scale_from_amax(3.0f, 448.0f, true) == 128.0f);
  // An amax below 1e-12 is clamped.
  CHECK(bits(torchao_scale_from_amax(1e-20f, 448.0f, false)) ==
        bits(static_cast<float>(448.0 / 1e-12)));
}

// Away from the clamp and the special cases both rules give the correctly rounded fp8_max / amax
// (a float64 quotient of two floats, rounded to fp32, differs from the direct fp32 division only
// in rare double-rounding cases), so a sweep over amaxes must agree bit for bit.
TEST_CASE("TE and torchao scales agree away from the special cases (sweep)") {
  int compared = 0;
  for (float a = 1e-6f; a < 1e6f; a *= 1.0009765625f) {
    const float te = te_scale_from_amax(a, 448.0f, false, 0.0f, kFltMax);
    const float ao = torchao_scale_from_amax(a, 448.0f, false);
    INFO("amax 0x" << std::hex << bits(a));
    REQUIRE(bits(te) == bits(ao));
    ++compared;
  }
  CHECK(compared > 10000);
}

TEST_CASE("quantize_current_te: amax -> scale -> satfinite cast, scale_inv = RN(1/s)") {
  const std::vector<float> x = {1.0f, -3.0f, 0.5f, kNaN, 2.0f, 0.0f};
  const QuantizeResult r = quantize_current_te(x, 2, 3, Format::E4M3);
  const float s = 448.0f / 3.0f;  // NaN ignored by the amax
  REQUIRE(r.tensor.scale.size() == 1);
  CHECK(bits(r.tensor.scale[0]) == bits(s));
  CHECK(bits(r.tensor.scale_inv[0]) == bits(1.0f / s));
  CHECK(r.tensor.block_rows == 2);
  CHECK(r.tensor.block_cols == 3);
  CHECK(r.tensor.data[1] == 0xFE);  // -3 * s = -448
  CHECK(r.tensor.data[3] == 0x7F);  // NaN
  CHECK(r.stats.amax == 3.0f);
  CHECK(r.stats.nan == 1);

  // Inf: amax Inf -> scale 1.0; the Inf saturates to 448.
  const std::vector<float> with_inf = {1.0f, kInf, -2.0f, 0.25f};
  const QuantizeResult ri = quantize_current_te(with_inf, 2, 2, Format::E4M3);
  CHECK(ri.tensor.scale[0] == 1.0f);
  CHECK(ri.tensor.data[1] == 0x7E);
  CHECK(ri.tensor.data[2] == 0xC0);  // -2.0
  CHECK(ri.stats.saturated == 1);

  // pow2 and the reduction hook (MAX over ranks): the other rank saw 100.
  const QuantizeResult rr =
      quantize_current_te(x, 2, 3, Format::E5M2, true, 0.0f,
                          [](std::span<float> a) { a[0] = std::fmax(a[0], 100.0f); });
  CHECK(rr.tensor.scale[0] == 512.0f);  // 57344 / 100 = 573.44 -> 2^9
}

TEST_CASE("quantize_tensorwise_torchao: NaN poisons the tensor, Inf zeroes it") {
  const std::vector<float> x = {1.0f, -3.0f, 0.5f, 2.0f};
  const QuantizeResult r = quantize_tensorwise_torchao(x, 2, 2, Format::E4M3);
  CHECK(bits(r.tensor.scale[0]) == bits(static_cast<float>(448.0 / 3.0)));
  CHECK(r.tensor.data[1] == 0xFE);

  const std::vector<float> with_nan = {1.0f, kNaN, 0.5f, 2.0f};
  const QuantizeResult rn = quantize_tensorwise_torchao(with_nan, 2, 2, Format::E4M3);
  CHECK(std::isnan(rn.tensor.scale[0]));
  for (auto code : rn.tensor.data) CHECK(code == 0x7F);
  CHECK(rn.stats.nan == 4);

  const std::vector<float> with_inf = {1.0f, -kInf, 0.5f, 2.0f};
  const QuantizeResult rf = quantize_tensorwise_torchao(with_inf, 2, 2, Format::E5M2);
  CHECK(rf.tensor.scale[0] == 0.0f);
  CHECK(rf.tensor.data[0] == 0x00);  // 1 * 0 = 0
  CHECK(rf.tensor.data[1] == 0x7F);  // -Inf * 0 = NaN
  CHECK(rf.stats.nan == 1);

  const std::vector<float> zeros(6, 0.0f);
  const QuantizeResult rz = quantize_tensorwise_torchao(zeros, 2, 3, Format::E4M3, true);
  CHECK(rz.tensor.scale[0] == std::ldexp(1.0f, 48));  // 4.48e14 -> 2^48
  for (auto code : rz.tensor.data) CHECK(code == 0x00);
}

TEST_CASE("current scaling: bad shapes and formats are named") {
  const std::vector<float> x(6, 1.0f);
  CHECK_THROWS_WITH(quantize_current_te(x, 4, 2, Format::E4M3), Catch::Contains("rows * cols"));
  CHECK_THROWS_WITH(quantize_current_te(x, 2, 3, Format::BF16), Catch::Contains("format = bf16"));
  CHECK_THROWS_WITH(quantize_tensorwise_torchao(x, 0, 6, Format::E4M3),
                    Catch::Contains("rows = 0"));
}

TEST_CASE("amax_nan_propagating (torch.max semantics) at every chunk edge: NaN anywhere wins") {
  // Against a plain loop; sizes and positions straddle the 4096-element chunks of its one pass.
  const auto reference = [](const std::vector<float>& x) {
    float m = 0.0f;
    for (const float v : x) {
      if (std::isnan(v)) return kNaN;
      m = std::max(m, std::fabs(v));
    }
    return m;
  };
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096},
                              std::size_t{4097}, std::size_t{3 * 4096 + 5}}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 2654435761u) % 1000) * (i % 2 ? -0.01f : 0.01f);
    }
    if (n > 0) x[n - 1] = -7777.0f;  // the largest magnitude in the last (partial) chunk
    INFO("n = " << n);
    CHECK(bits(amax_nan_propagating(x)) == bits(reference(x)));
    for (const std::size_t at : {std::size_t{0}, n / 2, n - 1, std::size_t{4096}}) {
      if (at >= n) continue;
      auto y = x;
      y[at] = kNaN;
      INFO("NaN at " << at);
      CHECK(std::isnan(amax_nan_propagating(y)));
    }
    if (n > 0) {  // ±Inf is a value, not a NaN
      auto y = x;
      y[0] = -kInf;
      CHECK(amax_nan_propagating(y) == kInf);
    }
  }
}
