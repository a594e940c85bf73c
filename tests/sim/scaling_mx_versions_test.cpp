// The two torchao versions of the MX scale modes (sim/scaling/mx.hpp, TorchaoVersion):
//   1. torchao-0.18 replay: torchao main's make_mxfp8_semantic_cases recomputed case by case by
//      v0.18.0's rules (torchao-mx.md §4.3), each with the reason it differs from main or not,
//      and v0.18.0's own test_to_mx_rceil ground truth (all 8 blocks, NaN and denormals too);
//   2. the mechanism: v0.18's element rule divides by a float scale, sim multiplies by
//      mx_block_multiplier; the two are equal bit for bit for every code and many inputs;
//   3. a scalar transcription of v0.18.0's `to_mx` (torchao/prototype/mx_formats/mx_tensor.py,
//      eager: division, clamp, RNE) against quantize_mx on random blocks, every mode and format;
//   4. a sweep over many random blocks: exactly which blocks differ between the versions, and
//      that each difference is one of the documented causes (counts printed).
#include <algorithm>
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/mx.hpp"
#include "tests/sim/mx_cases.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::test::mx;

namespace {

constexpr TorchaoVersion kV0_18 = TorchaoVersion::kV0_18;
constexpr TorchaoVersion kMain = TorchaoVersion::kMain;
constexpr std::array<E8M0Mode, 4> kTorchaoModes = {E8M0Mode::kFloor, E8M0Mode::kCeil,
                                                   E8M0Mode::kEven, E8M0Mode::kRceil};

bool same_bits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }

struct Expected {
  std::uint8_t scale;
  std::vector<std::uint8_t> data;
  bool differs;     // from main's expectation for the same case
  std::string why;  // torchao-mx.md §4.3 rule behind it
};

// One case of make_mxfp8_semantic_cases (main's bytes in `c`) as torchao v0.18.0 computes it.
Expected torchao_0_18(const SemanticCase& c, bool bf16, bool is_floor) {
  Expected e{c.scale, c.data, false, ""};
  const auto fill = [&e](std::uint8_t code) { e.data.assign(32, code); };
  const std::string& n = c.name;
  const std::uint8_t sign = n.rfind("negative", 0) == 0 ? 0x80 : 0x00;
  if (n == "smallest_normal") {
    e.differs = true;
    if (is_floor) {
      fill(0x38);
      e.why = "byte 0 (2^-127) is stored, but the elements are divided by the FLT_MIN clamp "
              "2^-126: 2^-126 / 2^-126 = 1.0 (0x38; main 2^-126 * 2^127 = 2.0, 0x40)";
    } else {
      fill(0x00);
      e.why = "descale 2^-126/448 gives byte 0, whose reciprocal is 1.0, not 2^127: 2^-126 "
              "flushes to 0 (main 0x40)";
    }
  } else if (n == "mixed_inf") {
    e.differs = true;
    e.scale = is_floor ? 247 : 254;
    fill(0x00);
    e.data[0] = 0x7E;
    e.why = is_floor ? "only NaN gives 255: Inf's exponent field 255 is e = 128, byte 128 - 8 + "
                       "127 = 247; 1 / 2^120 flushes to 0, Inf / 2^120 clamps to 448 (main 255, "
                       "all NaN)"
                     : "v0.18 maps an Inf descale to byte 254 with reciprocal 2^-127: 1 * 2^-127 "
                       "flushes to 0, Inf clamps to 448 (main 255, all NaN)";
  } else if (n == "mixed_nan") {
    if (is_floor) {
      e.differs = true;
      fill(0x00);
      e.data[0] = 0x7F;
      e.why = "byte 255 is the float scale +Inf: 1 / Inf = 0, NaN stays NaN (main: every element "
              "NaN)";
    } else {
      e.why = "byte 255, and the reciprocal is descale itself (NaN): every element NaN, as main";
    }
  } else if (n == "positive_smallest_subnormal" || n == "negative_smallest_subnormal") {
    if (bf16) {
      e.differs = true;
      fill(static_cast<std::uint8_t>((is_floor ? 0x04 : 0x00) | sign));
      e.why = is_floor ? "2^-133 / 2^-126 (the FLT_MIN clamp) = 2^-7, code 0x04 (main 2^-133 * "
                         "2^127 = 2^-6, 0x08)"
                       : "byte 0 with reciprocal 1.0: 2^-133 flushes to (signed) zero (main 0x08)";
    } else {
      e.why = "2^-149 flushes to (signed) zero under 2^126, 2^127 or 1.0 alike";
    }
  } else if (n == "rceil_premature_bf16_lowers_scale" && !is_floor && !bf16) {
    e.differs = true;
    e.scale = 120;
    fill(0x7E);
    e.why = "descale (3.5 + ulp) / 448 = 2^-7 (1 + 2^-23); fp32 log2 of it rounds to exactly -7, "
            "ceil -7: byte 120, and 448.0001 clamps to 448 (main 121, 0x76)";
  } else if (n == "zero") {
    e.why = "amax 0 gives byte 0 in both; 0 stays 0 under any scale";
  } else if (n == "positive_fp8_max" || n == "negative_fp8_max") {
    e.why = "byte 127, scale 1: x / 1 = x * 1";
  } else if (n == "positive_dtype_max" || n == "negative_dtype_max" ||
             n == "mixed_saturation_and_underflow") {
    e.why = "a finite normal amax gives main's byte (rceil: log2(max/448) = 119.2, far from an "
            "integer) and x / 2^k = x * 2^-k; 1 / 2^119 (2^120) flushes as in main";
  } else if (n == "mixed_positive_underflow" || n == "mixed_negative_underflow") {
    e.why = "amax 1: byte 119 in both; the tiny element times 2^8 still flushes to signed zero";
  } else if (n == "rceil_premature_bf16_lowers_scale") {
    e.why = is_floor ? "floor reads the exponent field: 120 in both"
                     : "bf16 makes it exactly 3.5: descale 2^-7, log2 exact, byte 120 in both";
  } else if (n == "floor_premature_bf16_raises_scale") {
    e.why = "exponent-field bytes as main; rceil's log2(512/448) = 0.19 is far from an integer";
  } else if (n == "all_nan") {
    e.why = "byte 255; NaN / Inf and NaN * NaN are both NaN";
  } else if (n == "positive_satfinite" || n == "negative_satfinite") {
    e.why = "480 is finite: floor 127 saturates to 448, rceil log2(480/448) = 0.1 gives 128 and "
            "240, as main";
  } else {
    e.why = "?";  // a case this table does not know: the test below fails on it
  }
  return e;
}

TEST_CASE("torchao-0.18 replay: main's 18 semantic cases recomputed, each with its reason") {
  int differing = 0;
  for (const bool bf16 : {false, true}) {
    for (const bool is_floor : {true, false}) {
      const E8M0Mode mode = is_floor ? E8M0Mode::kFloor : E8M0Mode::kRceil;
      for (const SemanticCase& c : mxfp8_semantic_cases(bf16, is_floor)) {
        const Expected e = torchao_0_18(c, bf16, is_floor);
        INFO(c.name << (bf16 ? " bf16 " : " fp32 ") << to_string(mode) << ": " << e.why);
        REQUIRE(e.why != "?");
        // The reason's claim (differs or same as main) is itself checked against main's bytes.
        CHECK(e.differs == (e.scale != c.scale || e.data != c.data));
        differing += e.differs ? 1 : 0;
        const QuantizeResult r =
            quantize_mx(c.inputs, 1, 32, ScaleAxis::kRowwise, Format::E4M3, mode, kV0_18);
        CHECK(int(r.tensor.scale_e8m0[0]) == int(e.scale));
        for (std::size_t i = 0; i < 32; ++i) {
          INFO("element " << i << " input " << hex(bits(c.inputs[i])));
          CHECK(hex(r.tensor.data[i]) == hex(e.data[i]));
        }
        // Dequantization (get_fp_scale) is 2^(e - 127) in both versions.
        CHECK(same_bits(r.tensor.scale_inv[0], decode_e8m0(e.scale)));
      }
    }
  }
  // FLT_MIN clamp (x2 floor + rceil), Inf (x2), NaN floor (x2), bf16 subnormals (x4), 3.5 + ulp.
  CHECK(differing == 2 * 2 + 2 * 2 + 2 + 4 + 1);
}

TEST_CASE("torchao-0.18 test_to_mx_rceil ground truth (v0.18.0), all 8 blocks") {
  for (const RceilBlock& b : to_mx_rceil_blocks()) check_rceil_block(b, kV0_18);
}

TEST_CASE("torchao-0.18 special blocks: Inf, NaN, FLT_MIN clamp, b == 0, E5M2") {
  std::vector<float> x(32, 1.0f);
  x[5] = -kInf;
  x[6] = -2.0f;
  const QuantizeResult fl =
      quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kFloor, kV0_18);
  CHECK(fl.tensor.scale_e8m0[0] == 247);
  CHECK(fl.tensor.data[5] == 0xFE);  // -Inf / 2^120 = -Inf, clamped to -448
  CHECK(fl.tensor.data[6] == 0x80);  // -2 / 2^120 flushes to -0
  CHECK(fl.tensor.data[0] == 0x00);
  // E5M2: emax 15, so an Inf amax gives 128 - 15 + 127 = 240.
  CHECK(mx_scale_code(kInf, Format::E5M2, E8M0Mode::kFloor, kV0_18) == 240);
  CHECK(mx_scale_code(kInf, Format::E5M2, E8M0Mode::kRceil, kV0_18) == 254);
  // even: amax >= (2 - 2^-4) 2^127 rounds to Inf; v0.18 keeps e = 128 (247), main gives 255.
  const float near_max = std::numeric_limits<float>::max();
  CHECK(mx_scale_code(near_max, Format::E4M3, E8M0Mode::kEven, kV0_18) == 247);
  CHECK(mx_scale_code(near_max, Format::E4M3, E8M0Mode::kEven, kMain) == 255);
  CHECK(mx_scale_code(kNaN, Format::E4M3, E8M0Mode::kEven, kV0_18) == 255);
  CHECK(mx_scale_code(kInf, Format::E4M3, E8M0Mode::kCeil, kV0_18) == 247);

  std::vector<float> nan_block(32, -3.0f);
  nan_block[1] = kNaN;
  nan_block[2] = kInf;
  const QuantizeResult n =
      quantize_mx(nan_block, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kCeil, kV0_18);
  CHECK(n.tensor.scale_e8m0[0] == 255);
  CHECK(n.tensor.data[0] == 0x80);  // -3 / Inf = -0
  CHECK(n.tensor.data[1] == 0x7F);  // NaN / Inf
  CHECK(n.tensor.data[2] == 0x7F);  // Inf / Inf
  CHECK(n.stats.nan == 2);
  CHECK(std::isnan(n.tensor.scale_inv[0]));

  // RCEIL b == 0: reciprocal 1.0 (TE's exp2f_rcp), so every element of a tiny block flushes.
  CHECK(mx_block_multiplier(0, E8M0Mode::kRceil, kV0_18) == 1.0f);
  CHECK(mx_block_multiplier(0, E8M0Mode::kFloor, kV0_18) == std::ldexp(1.0f, 126));
  CHECK(mx_block_multiplier(255, E8M0Mode::kFloor, kV0_18) == 0.0f);
  CHECK(std::isnan(mx_block_multiplier(255, E8M0Mode::kRceil, kV0_18)));
  CHECK(bits(mx_block_multiplier(254, E8M0Mode::kRceil, kV0_18)) == 0x0040'0000u);  // 2^-127
  for (const E8M0Mode m : {E8M0Mode::kTe, E8M0Mode::kFloor, E8M0Mode::kRceil}) {
    for (int e = 0; e < 256; ++e) {
      const auto code = static_cast<std::uint8_t>(e);
      CHECK(same_bits(mx_block_multiplier(code, m, kMain), mx_element_multiplier(code)));
    }
  }
  // torchao-0.18 is the default of every quantize_mx entry point.
  CHECK(quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kFloor)
            .tensor.scale_e8m0[0] == 247);
  CHECK(std::string(to_string(kV0_18)) == "torchao-0.18");
  CHECK(std::string(to_string(kMain)) == "torchao-main");
}

// v0.18 quantizes floor/ceil/even as x / max(bitcast<float>(e << 23), 2^-126); sim multiplies
// by mx_block_multiplier(e). Every e and inputs across every binade, both signs, and specials.
TEST_CASE(
    "torchao-0.18 division by the clamped float scale equals the block multiplier, bit for bit") {
  std::vector<float> inputs = {0.0f, -0.0f, kInf, -kInf, kNaN, std::numeric_limits<float>::max()};
  std::mt19937 gen(18);
  std::uniform_int_distribution<std::uint32_t> mantissa(0, 0x7F'FFFF);
  for (std::uint32_t exponent = 0; exponent < 255; ++exponent) {
    for (int k = 0; k < 48; ++k) {
      const std::uint32_t m = k == 0 ? 0u : k == 1 ? 0x7F'FFFFu : k == 2 ? 1u : mantissa(gen);
      const float v = from_bits((exponent << 23) | m);
      inputs.push_back(v);
      inputs.push_back(-v);
    }
  }
  std::uint64_t compared = 0;
  for (int e = 0; e < 256; ++e) {
    const auto code = static_cast<std::uint8_t>(e);
    const float scale_fp32 = std::max(from_bits(static_cast<std::uint32_t>(e) << 23), 0x1p-126f);
    const float mult = mx_block_multiplier(code, E8M0Mode::kFloor, kV0_18);
    for (const E8M0Mode m : {E8M0Mode::kCeil, E8M0Mode::kEven}) {
      REQUIRE(same_bits(mx_block_multiplier(code, m, kV0_18), mult));
    }
    for (const float x : inputs) {
      const float divided = x / scale_fp32;
      const float multiplied = x * mult;
      if (!same_bits(divided, multiplied)) {
        FAIL("e " << e << " x " << hex(bits(x)) << ": x / s " << hex(bits(divided)) << ", x * m "
                  << hex(bits(multiplied)));
      }
      ++compared;
    }
  }
  CHECK(compared == 256u * inputs.size());
}

// ---- torchao v0.18.0 to_mx, eager, one block: a transcription of the Python -----------------

struct Block {
  std::uint8_t scale;
  std::vector<std::uint8_t> data;
};

std::uint8_t cast_after_clamp(float v, float max_pos, Format f) {
  // torch.clamp(data_lp, -max_pos, max_pos) keeps NaN; then .to(float8) is RNE.
  const float clamped = std::isnan(v) ? v : std::clamp(v, -max_pos, max_pos);
  return cast_fp32_to_fp8(clamped, f, Overflow::kSatFinite);
}

Block to_mx_v0_18(std::span<const float> x, Format f, E8M0Mode mode) {
  const bool e4m3 = f == Format::E4M3;
  const float max_pos = e4m3 ? 448.0f : 57344.0f;  // F8E4M3_MAX, F8E5M2_MAX
  const int target_max_pow2 = e4m3 ? 8 : 15;       // F8E4M3_MAX_POW2, F8E5M2_MAX_POW2
  const int mbits = e4m3 ? 3 : 2;
  float max_abs = 0.0f;  // torch.amax(torch.abs(x)): NaN propagates
  for (const float v : x)
    max_abs = std::isnan(v) || std::isnan(max_abs) ? kNaN : std::max(max_abs, std::fabs(v));
  Block out{0, {}};
  if (mode == E8M0Mode::kRceil) {  // _to_mx_rceil, fallback branch
    const float descale = max_abs / max_pos;
    if (std::isnan(descale)) {
      out.scale = 255;
    } else if (std::isinf(descale)) {
      out.scale = 254;
    } else {
      const auto log2 = static_cast<float>(std::log2(static_cast<double>(descale)));
      out.scale = static_cast<std::uint8_t>(std::clamp(std::ceil(log2), -127.0f, 127.0f) + 127.0f);
    }
    const float rcp = out.scale == 255   ? descale
                      : out.scale == 254 ? 0x1p-127f
                      : out.scale == 0   ? 1.0f
                                         : std::ldexp(1.0f, 127 - int{out.scale});
    for (const float v : x) out.data.push_back(cast_after_clamp(v * rcp, max_pos, f));
    return out;
  }
  std::uint32_t u = bits(max_abs);
  if (mode == E8M0Mode::kEven) {
    u = (u + (1u << (23 - mbits - 1))) & 0xFF80'0000u;  // ((1 << (8 + 1)) - 1) << 23
    if (std::isnan(max_abs)) u = bits(kNaN);            // max_abs[nan_mask] = nan
  }
  int pow2 = static_cast<int>((u >> 23) & 0xFF) - 127;
  if (mode == E8M0Mode::kCeil) pow2 += (u & 0x7F'FFFF) > 0 ? 1 : 0;
  const int unbiased = std::clamp(pow2 - target_max_pow2, -127, 128);
  out.scale = std::isnan(from_bits(u)) ? 255 : static_cast<std::uint8_t>(unbiased + 127);
  const float scale_fp32 =
      std::max(from_bits(static_cast<std::uint32_t>(out.scale) << 23), 0x1p-126f);
  for (const float v : x) out.data.push_back(cast_after_clamp(v / scale_fp32, max_pos, f));
  return out;
}

TEST_CASE("torchao-0.18 quantize_mx equals a transcription of v0.18.0's to_mx (division form)") {
  constexpr std::int64_t kRows = 2000;
  std::int64_t blocks_equal = 0;
  for (const Format f : {Format::E4M3, Format::E5M2}) {
    const std::vector<float> x = adversarial_blocks(kRows, f, f == Format::E4M3 ? 1u : 2u);
    for (const E8M0Mode mode : kTorchaoModes) {
      const QuantizeResult r = quantize_mx(x, kRows, 32, ScaleAxis::kRowwise, f, mode, kV0_18);
      for (std::int64_t b = 0; b < kRows; ++b) {
        const std::span<const float> block(x.data() + b * 32, 32);
        const Block ref = to_mx_v0_18(block, f, mode);
        const std::uint8_t* codes = r.tensor.data.data() + static_cast<std::size_t>(b) * 32;
        if (r.tensor.scale_e8m0[static_cast<std::size_t>(b)] == ref.scale &&
            std::equal(ref.data.begin(), ref.data.end(), codes)) {
          ++blocks_equal;
          continue;
        }
        INFO(spec(f).name << " " << to_string(mode) << " block " << b << " x[0] "
                          << hex(bits(block[0])));
        REQUIRE(int(r.tensor.scale_e8m0[static_cast<std::size_t>(b)]) == int(ref.scale));
        for (std::size_t i = 0; i < 32; ++i) {
          INFO("element " << i << " x " << hex(bits(block[i])));
          REQUIRE(hex(codes[i]) == hex(ref.data[i]));
        }
      }
    }
  }
  CHECK(blocks_equal == 2 * 4 * kRows);
}

// ---- which blocks differ between the versions, and why --------------------------------------

std::string classify(std::span<const float> block, Format f, E8M0Mode mode, std::uint8_t b18,
                     std::span<const std::uint8_t> q18, std::uint8_t bmain,
                     std::span<const std::uint8_t> qmain) {
  bool has_nan = false, has_inf = false;
  float amax = 0.0f;
  for (const float v : block) {
    has_nan |= std::isnan(v);
    has_inf |= std::isinf(v);
    if (!std::isnan(v)) amax = std::max(amax, std::fabs(v));
  }
  const auto all = [&](auto pred) {
    for (std::size_t i = 0; i < block.size(); ++i) {
      if (!pred(block[i], q18[i], qmain[i])) return false;
    }
    return true;
  };
  const auto cast_times = [f](float v, float m) {
    return cast_fp32_to_fp8(v * m, f, Overflow::kSatFinite);
  };
  const int emax = spec(f).max_exponent();
  if (mode != E8M0Mode::kRceil) {
    if (has_nan) {  // both 255; v0.18 divides by +Inf, main multiplies by NaN
      const bool ok =
          b18 == 255 && bmain == 255 && all([](float v, std::uint8_t a, std::uint8_t m) {
            const std::uint8_t want = std::isfinite(v) ? (std::signbit(v) ? 0x80 : 0x00) : 0x7F;
            return a == want && m == 0x7F;
          });
      return ok ? "NaN block: x / +Inf (finite -> +-0)" : "unexplained";
    }
    std::uint32_t u = bits(amax);
    if (mode == E8M0Mode::kEven) u = (u + (1u << (22 - spec(f).mantissa_bits))) & 0xFF80'0000u;
    if (std::isinf(from_bits(u))) {
      const bool ok = bmain == 255 && b18 == 128 - emax + 127;
      return ok ? (has_inf ? "Inf amax: byte 128 - emax + 127, not 255"
                           : "even rounds amax to Inf: byte 128 - emax + 127, not 255")
                : "unexplained";
    }
    if (b18 == 0) {
      const bool ok = bmain == 0 && all([&](float v, std::uint8_t a, std::uint8_t m) {
                        return a == cast_times(v, 0x1p126f) && m == cast_times(v, 0x1p127f);
                      });
      return ok ? "byte 0: FLT_MIN clamp, x / 2^-126" : "unexplained";
    }
    return "unexplained";
  }
  if (has_nan) return "unexplained";  // both versions: 255 and every element NaN
  if (has_inf) return b18 == 254 && bmain == 255 ? "Inf amax: byte 254, not 255" : "unexplained";
  const auto fp8max = static_cast<float>(spec(f).max_finite());
  const float d_div = amax / fp8max;
  const float d_mul = amax * static_cast<float>(1.0 / spec(f).max_finite());
  if (b18 == 0) {
    const bool ok =
        all([&](float v, std::uint8_t a, std::uint8_t) { return a == cast_times(v, 1.0f); });
    return ok ? "byte 0: reciprocal 1.0, not 2^127" : "unexplained";
  }
  if (b18 == bmain) return "unexplained";  // same byte, same multiplier: nothing may differ
  const bool codes_follow_byte = all([&](float v, std::uint8_t a, std::uint8_t) {
    return a == cast_times(v, std::ldexp(1.0f, 127 - int{b18}));
  });
  if (!codes_follow_byte) return "unexplained";
  // ceil(log2 d) exactly, for d > 2^-127 (rceil_float_to_e8m0 is exact there).
  const std::uint8_t exact_ceil = rceil_float_to_e8m0(d_div);
  if (int{b18} == exact_ceil - 1 && torch_log2_f32(d_div) == std::round(torch_log2_f32(d_div))) {
    return "fp32 log2 of d just above 2^k rounds to k";
  }
  if (b18 == exact_ceil && bits(d_div) != bits(d_mul))
    return "d = amax / max (division), not amax * RN(1/max)";
  return "unexplained";
}

TEST_CASE(
    "torchao-0.18 vs torchao-main over random blocks: every difference has a documented cause") {
  constexpr std::int64_t kRows = 10000;
  std::map<std::string, std::uint64_t> causes;
  std::uint64_t same = 0;
  for (const Format f : {Format::E4M3, Format::E5M2}) {
    const std::vector<float> x = adversarial_blocks(kRows, f, f == Format::E4M3 ? 13u : 14u);
    for (const E8M0Mode mode : kTorchaoModes) {
      const QuantizeResult a = quantize_mx(x, kRows, 32, ScaleAxis::kRowwise, f, mode, kV0_18);
      const QuantizeResult m = quantize_mx(x, kRows, 32, ScaleAxis::kRowwise, f, mode, kMain);
      for (std::int64_t b = 0; b < kRows; ++b) {
        const auto ub = static_cast<std::size_t>(b);
        const std::span<const std::uint8_t> qa(a.tensor.data.data() + ub * 32, 32);
        const std::span<const std::uint8_t> qm(m.tensor.data.data() + ub * 32, 32);
        const std::uint8_t ba = a.tensor.scale_e8m0[ub], bm = m.tensor.scale_e8m0[ub];
        if (ba == bm && std::equal(qa.begin(), qa.end(), qm.begin())) {
          ++same;
          continue;
        }
        const std::span<const float> block(x.data() + b * 32, 32);
        const std::string cause = classify(block, f, mode, ba, qa, bm, qm);
        if (cause == "unexplained") {
          FAIL_CHECK(spec(f).name << " " << to_string(mode) << " block " << b << ": bytes "
                                  << int{ba} << " (0.18) vs " << int{bm} << " (main), x[0] "
                                  << hex(bits(block[0])) << ": no documented cause");
        }
        ++causes[std::string(to_string(mode)) + ": " + cause];
      }
    }
  }
  std::printf("torchao-0.18 vs torchao-main over %lld blocks x {E4M3, E5M2} x {floor, ceil, even, "
              "rceil}: %llu identical\n",
              static_cast<long long>(kRows), static_cast<unsigned long long>(same));
  for (const auto& [cause, n] : causes)
    std::printf("  %6llu  %s\n", static_cast<unsigned long long>(n), cause.c_str());
  // Every documented cause shows up in the sample (the generator aims at each).
  for (const char* expected :
       {"floor: NaN block: x / +Inf (finite -> +-0)",
        "floor: Inf amax: byte 128 - emax + 127, not 255",
        "floor: byte 0: FLT_MIN clamp, x / 2^-126",
        "ceil: Inf amax: byte 128 - emax + 127, not 255",
        "even: even rounds amax to Inf: byte 128 - emax + 127, not 255",
        "rceil: Inf amax: byte 254, not 255", "rceil: byte 0: reciprocal 1.0, not 2^127",
        "rceil: fp32 log2 of d just above 2^k rounds to k"}) {
    INFO(expected);
    CHECK(causes[expected] > 0);
  }
  CHECK(same > 0);
}

}  // namespace
