// NVFP4 (sim/scaling/nvfp4.hpp): the te mode against the published properties of TE's kernels
// (fp4-formats.md §3a; core_nvfp4.cuh), the torchao mode's differences from it (§3b-c), the
// block shapes (rows, columns, 16 x 16 tiles) and MXFP4/MXFP6 through the MX rules. Byte-for-byte
// agreement with torchao 0.18 is tests/python/test_fp4_scaling_torchao.py.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/transposed.hpp"
#include "tests/sim/float_bits.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::testing;

namespace {

constexpr BlockShape kRows{1, 16}, kCols{16, 1}, kTiles{16, 16};

std::vector<float> gaussian(std::size_t n, unsigned seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

}  // namespace

TEST_CASE("te: S_enc = 2688 / amax in one division, S_dec = 1 / S_enc") {
  for (const float amax : {1.0f, 3.0f, 7.0f, 1e-20f, 1e20f, 2688.0f, 0.1f}) {
    const Nvfp4Global g = nvfp4_global_scale(amax, Nvfp4Mode::kTe);
    INFO("amax " << amax << " encode bits 0x" << std::hex
                 << std::bit_cast<std::uint32_t>(g.encode));
    CHECK(g.encode == 2688.0f / amax);
    CHECK(g.decode == 1.0f / g.encode);
  }
  // torchao's decode scale is amax / 2688 and its encode 1 / that: another rounding (§3c ii).
  int differ = 0;
  for (const float amax : gaussian(4096, 7)) {
    const float a = std::fabs(amax) + 0.01f;
    const Nvfp4Global te = nvfp4_global_scale(a, Nvfp4Mode::kTe);
    const Nvfp4Global ao = nvfp4_global_scale(a, Nvfp4Mode::kTorchao);
    CHECK(ao.decode == a / 2688.0f);
    differ += te.encode != ao.encode ? 1 : 0;
  }
  CHECK(differ > 0);
}

TEST_CASE("te: amax 0 and amax Inf give S_enc = 1; huge S_enc saturates to FLT_MAX") {
  CHECK(nvfp4_global_scale(0.0f, Nvfp4Mode::kTe).encode == 1.0f);
  CHECK(nvfp4_global_scale(std::numeric_limits<float>::infinity(), Nvfp4Mode::kTe).encode == 1.0f);
  CHECK(nvfp4_global_scale(1e-42f, Nvfp4Mode::kTe).encode == kFltMax);  // 2688 / 1e-42 = Inf
}

TEST_CASE("te: the block scale multiplies amax_b by RN(S_enc * fp32(1/6)), rounded once more") {
  // The two orders differ only where the product lands within a few fp32 ulps of an E4M3
  // rounding midpoint: scan amax_b around the amax_b of each midpoint (1 + (2m + 1)/16) * 2^e and
  // keep the cases where (amax_b / 6) * S_enc and amax_b * (S_enc * (1/6)) give different codes.
  // quantize_nvfp4 must give the second (the kernel's) in every one.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(1.0f, 2.0f);
  int found = 0;
  for (int trial = 0; trial < 64; ++trial) {
    const float amax = u(rng) * std::ldexp(1.0f, trial % 16 - 4);
    const Nvfp4Global g = nvfp4_global_scale(amax, Nvfp4Mode::kTe);
    for (int e = -4; e <= 7; ++e) {
      for (int m = 0; m < 8; ++m) {
        const float mid = (1.0f + static_cast<float>(2 * m + 1) / 16.0f) * std::ldexp(1.0f, e);
        float amax_b = mid * 6.0f / g.encode;
        for (int k = 0; k < 32; ++k) amax_b = std::nextafter(amax_b, 0.0f);
        for (int k = 0; k < 64; ++k, amax_b = std::nextafter(amax_b, kFltMax)) {
          if (amax_b > amax) break;
          const std::uint8_t kernel = cast_fp32_to_fp8(amax_b * (g.encode * (1.0f / 6.0f)),
                                                       Format::E4M3, Overflow::kSatFinite);
          const std::uint8_t other =
              cast_fp32_to_fp8((amax_b / 6.0f) * g.encode, Format::E4M3, Overflow::kSatFinite);
          if (kernel == other) continue;
          ++found;
          std::vector<float> x(32, 0.0f);
          x[0] = amax;
          x[16 + 5] = -amax_b;
          const QuantizeResult r = quantize_nvfp4(x, 1, 32, kRows, Nvfp4Mode::kTe);
          INFO("amax " << amax << " amax_b " << amax_b);
          REQUIRE(static_cast<int>(r.tensor.scale_e4m3[1]) == kernel);
        }
      }
    }
  }
  INFO("cases where the orders differ: " << found);
  CHECK(found > 0);
}

TEST_CASE("te: the block scale has no lower clamp: E4M3 subnormal and zero scales") {
  // One block at amax 2688 (S_enc = 1, its scale 448), the others tiny: their scales are
  // amax_b / 6 rounded to E4M3, subnormal (from 2^-9) or 0x00.
  std::vector<float> x(64, 0.0f);
  x[0] = 2688.0f;
  x[16] = 6.0f * 0.005f;         // 0.005: E4M3 subnormal (2^-9 steps: 0.005 ~ 2.56 * 2^-9)
  x[32] = 6.0f * 0.0009f;        // below 2^-10: rounds to 0x00
  x[48] = -6.0f * 0.001953125f;  // exactly 2^-9: code 0x01
  const QuantizeResult te = quantize_nvfp4(x, 1, 64, kRows, Nvfp4Mode::kTe);
  const auto& s = te.tensor.scale_e4m3;
  CHECK(s[0] == 0x7E);
  CHECK(s[1] ==
        cast_fp32_to_fp8(x[16] * (1.0f * (1.0f / 6.0f)), Format::E4M3, Overflow::kSatFinite));
  CHECK((s[1] >= 0x01 && s[1] <= 0x07));
  CHECK(s[2] == 0x00);
  CHECK(s[3] == 0x01);
  // torchao floors every block scale at 2^-6 (0x08): never subnormal, never zero.
  const QuantizeResult ao = quantize_nvfp4(x, 1, 64, kRows, Nvfp4Mode::kTorchao);
  for (std::size_t b = 1; b < 4; ++b) CHECK(ao.tensor.scale_e4m3[b] == 0x08);
}

TEST_CASE("te: under a zero scale enc_b = FLT_MAX, nonzero elements become +-6, zeros stay 0") {
  std::vector<float> x(32, 0.0f);
  x[0] = 2688.0f;
  x[16] = 1e-3f;  // scale 0x00 (1e-3 / 6 < 2^-10)
  x[17] = -2e-3f;
  x[18] = 0.0f;
  x[19] = -0.0f;
  const QuantizeResult r = quantize_nvfp4(x, 1, 32, kRows, Nvfp4Mode::kTe);
  REQUIRE(r.tensor.scale_e4m3[1] == 0x00);
  CHECK(r.tensor.scale[1] == kFltMax);
  CHECK(r.tensor.data[16] == 0x7);  // +6
  CHECK(r.tensor.data[17] == 0xF);  // -6
  CHECK(r.tensor.data[18] == 0x0);
  CHECK(r.tensor.data[19] == 0x8);  // -0 keeps its sign (cvt.rn.satfinite)
  CHECK(decode_fp8(r.tensor.scale_e4m3[1], Format::E4M3) * r.tensor.scale_inv[1] == 0.0f);
}

TEST_CASE("te: an all-zero tensor gives zero scales and zero codes; torchao gives NaN scales") {
  const std::vector<float> x(64, 0.0f);
  const QuantizeResult te = quantize_nvfp4(x, 2, 32, kRows, Nvfp4Mode::kTe);
  for (const auto s : te.tensor.scale_e4m3) CHECK(s == 0x00);
  for (const auto q : te.tensor.data) CHECK(q == 0x0);
  CHECK(te.tensor.global_scale == std::vector<float>{0.0f, 1.0f, 1.0f});
  const QuantizeResult ao = quantize_nvfp4(x, 2, 32, kRows, Nvfp4Mode::kTorchao);
  for (const auto s : ao.tensor.scale_e4m3) CHECK(s == 0xFF);  // 0 / 0 through torch.clamp
}

TEST_CASE("te: Inf and NaN elements: S_enc = 1, the Inf block scale 448, NaN -> +6, NaN ignored") {
  std::vector<float> x = gaussian(48, 3);
  x[3] = -std::numeric_limits<float>::infinity();
  x[20] = std::numeric_limits<float>::quiet_NaN();
  const QuantizeResult r = quantize_nvfp4(x, 1, 48, kRows, Nvfp4Mode::kTe);
  CHECK(r.tensor.global_scale[1] == 1.0f);
  CHECK(r.tensor.scale_e4m3[0] == 0x7E);
  CHECK(r.tensor.data[3] == 0xF);   // -Inf * enc -> -6
  CHECK(r.tensor.data[20] == 0x7);  // NaN -> +6 (sign dropped)
  // The NaN block's scale comes from its other elements (fmaxf), as if the NaN were absent.
  std::vector<float> y = x;
  y[20] = 0.0f;
  const QuantizeResult r0 = quantize_nvfp4(y, 1, 48, kRows, Nvfp4Mode::kTe);
  CHECK(r0.tensor.scale_e4m3[1] == r.tensor.scale_e4m3[1]);
}

TEST_CASE("te: elements are cvt.rn.satfinite(x * enc_b), enc_b = fminf(1 / (s * S_dec), FLT_MAX)") {
  const std::vector<float> x = gaussian(64 * 64, 5, 3.0f);
  const QuantizeResult r = quantize_nvfp4(x, 64, 64, kRows, Nvfp4Mode::kTe);
  const float amax = r.tensor.global_scale[0];
  const float s_dec = 1.0f / (2688.0f / amax);
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint8_t s = r.tensor.scale_e4m3[i / 16];
    const float enc = std::fmin(1.0f / (decode_fp8(s, Format::E4M3) * s_dec), kFltMax);
    const std::uint8_t q = cast_fp32_to_subbyte(x[i] * enc, Format::E2M1, kSubbyteCuda);
    INFO("element " << i << " x " << x[i]);
    REQUIRE(r.tensor.data[i] == q);
    nonzero += (q & 0x7) != 0 ? 1 : 0;
  }
  CHECK(nonzero > x.size() / 2);
}

TEST_CASE("columnwise codes are the rowwise codes of the transpose; 16 x 16 tiles are symmetric") {
  const std::int64_t rows = 48, cols = 64;
  std::vector<float> x = gaussian(static_cast<std::size_t>(rows * cols), 9);
  for (std::size_t i = 0; i < x.size(); i += 37) x[i] *= 1e-5f;
  const std::vector<float> xt = transposed(x, rows, cols);
  for (const Nvfp4Mode mode : {Nvfp4Mode::kTe, Nvfp4Mode::kTorchao}) {
    const QuantizeResult col = quantize_nvfp4(x, rows, cols, kCols, mode);
    const QuantizeResult row_t = quantize_nvfp4(xt, cols, rows, kRows, mode);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        REQUIRE(col.tensor.code_at(r, c) == row_t.tensor.code_at(c, r));
      }
    }
    const QuantizeResult tile = quantize_nvfp4(x, rows, cols, kTiles, mode);
    const QuantizeResult tile_t = quantize_nvfp4(xt, cols, rows, kTiles, mode);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        REQUIRE(tile.tensor.code_at(r, c) == tile_t.tensor.code_at(c, r));
      }
    }
    CHECK(tile.tensor.scale_e4m3.size() == static_cast<std::size_t>((rows / 16) * (cols / 16)));
  }
}

TEST_CASE("the plan executor runs NVFP4 and refuses other block shapes") {
  QuantizePlan p;
  p.kind = QuantizeKind::kNvfp4;
  p.format = Format::E2M1;
  p.block = kRows;
  const std::vector<float> x = gaussian(32 * 32, 13);
  const QuantizeResult a = quantize(p, x, 32, 32, 4);
  const QuantizeResult b = quantize_nvfp4(x, 32, 32, kRows, Nvfp4Mode::kTe);
  CHECK(a.tensor.data == b.tensor.data);
  CHECK(a.tensor.scale_e4m3 == b.tensor.scale_e4m3);
  CHECK_THROWS_WITH(quantize_nvfp4(x, 32, 32, BlockShape{1, 32}, Nvfp4Mode::kTe),
                    Catch::Contains("accepted: 1 x 16, 16 x 1, 16 x 16"));
  CHECK(nvfp4_block_shape(Gemm::kFprop, Operand::kWeight, true) == kTiles);
  CHECK(nvfp4_block_shape(Gemm::kWgrad, Operand::kInput, true) == kCols);
}

TEST_CASE("MXFP4 / MXFP6: the MX scale rules with the element's emax, cast to the element") {
  // amax 6 in E2M1: floor e = 2 - 2 = 0 (code 127); ceil: 6 = 1.5 * 2^2 has mantissa bits, 128.
  std::vector<float> x(32, 1.0f);
  x[0] = 6.0f;
  CHECK(quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E2M1, E8M0Mode::kFloor)
            .tensor.scale_e8m0[0] == 127);
  CHECK(quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E2M1, E8M0Mode::kCeil)
            .tensor.scale_e8m0[0] == 128);
  // E3M2's emax is 4: amax 28 floors to 2^0.
  x[0] = 28.0f;
  const QuantizeResult e3m2 =
      quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E3M2, E8M0Mode::kFloor);
  CHECK(e3m2.tensor.scale_e8m0[0] == 127);
  CHECK(e3m2.tensor.data[0] == 0x1F);  // 28 = max
  // Floor clips the block's top: 7 * 2^0 in E2M1 saturates to 6 (0x7), counted.
  x[0] = 7.0f;
  const QuantizeResult e2m1 =
      quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E2M1, E8M0Mode::kFloor);
  CHECK(e2m1.tensor.data[0] == 0x7);
  CHECK(e2m1.stats.saturated == 1);
  // A NaN element: torchao's modes give the NaN block scale 0xFF; TE's rule ignores it and casts
  // the NaN to +max.
  x[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK(quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E2M3, E8M0Mode::kFloor)
            .tensor.scale_e8m0[0] == 0xFF);
  const QuantizeResult te = quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E2M3);
  CHECK(te.tensor.scale_e8m0[0] != 0xFF);
  CHECK(te.tensor.data[5] == 0x1F);
}
