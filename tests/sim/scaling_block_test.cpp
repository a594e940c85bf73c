// Block scaling (sim/scaling/block.hpp): TE Float8BlockScaling's per-block rule
// (te-accelerate.md §5.3: compute_scale_from_amax with pow2 on by default and value_for_inf = the
// input dtype's max), 1 x 128 / 128 x 1 / 128 x 128 blocks and partial edge blocks.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/block.hpp"
#include "sim/transposed.hpp"
#include "tests/sim/float_bits.hpp"
#include "tests/sim/random_floats.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::testing;

namespace {

// The block rule written out from te-accelerate.md §5.1 / §5.3 for a finite, non-zero amax and no
// eps: RN(fp8_max / amax), Inf -> value_for_inf, then the mantissa mask when pow2.
float expected_scale(float amax, float fp8_max, bool pow2, float value_for_inf) {
  if (amax == 0.0f || !std::isfinite(amax)) return 1.0f;
  float s = fp8_max / amax;
  if (std::isinf(s)) s = value_for_inf;
  if (pow2) s = std::bit_cast<float>(bits(s) & 0xFF80'0000u);
  return s;
}
}  // namespace

TEST_CASE("Block 128x128 with partial edge tiles: one pow2 scale per tile, valid elements only") {
  const std::int64_t rows = 130;
  const std::int64_t cols = 200;
  std::vector<float> x = uniform_floats(static_cast<std::size_t>(rows * cols), -1.0f, 1.0f, 3);
  // Make each tile's amax distinct and known: tile (i, j) holds one element of magnitude
  // 3 * 4^(2i + j) at its top-left corner.
  const float corner[2][2] = {{3.0f, 12.0f}, {48.0f, 192.0f}};
  x[0] = corner[0][0];
  x[128] = -corner[0][1];
  x[static_cast<std::size_t>(128 * cols)] = corner[1][0];
  x[static_cast<std::size_t>(128 * cols + 128)] = corner[1][1];

  BlockScalingConfig config;
  config.block = kBlock128x128;
  const QuantizeResult r = quantize_block_te(x, rows, cols, Format::E4M3, config);
  REQUIRE(r.tensor.scale_rows() == 2);
  REQUIRE(r.tensor.scale_cols() == 2);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      const float s = expected_scale(corner[i][j], 448.0f, true, std::numeric_limits<float>::max());
      const auto k = static_cast<std::size_t>(i * 2 + j);
      INFO("tile " << i << "," << j);
      CHECK(r.tensor.scale[k] == s);
      CHECK(r.tensor.scale_inv[k] == 1.0f / s);  // exact for a power of two
    }
  }
  // Every element uses its tile's scale.
  for (std::int64_t row = 0; row < rows; row += 7) {
    for (std::int64_t col = 0; col < cols; col += 5) {
      const float v = x[static_cast<std::size_t>(row * cols + col)];
      const float s = r.tensor.scale[static_cast<std::size_t>((row / 128) * 2 + col / 128)];
      REQUIRE(r.tensor.code_at(row, col) ==
              cast_fp32_to_fp8(v * s, Format::E4M3, Overflow::kSatFinite));
    }
  }
  CHECK(r.stats.count == static_cast<std::uint64_t>(rows * cols));
  CHECK(r.stats.saturated == 0);  // pow2 rounds the scale down: amax * s <= 448
}

TEST_CASE("Block 1x128 rowwise and 128x1 columnwise agree with the transpose") {
  const std::int64_t rows = 64;
  const std::int64_t cols = 300;  // 3 blocks per row, the last with 44 elements
  const std::vector<float> x =
      uniform_floats(static_cast<std::size_t>(rows * cols), -50.0f, 50.0f, 9);
  const std::vector<float> xt = transposed(x, rows, cols);
  BlockScalingConfig rowwise;
  rowwise.block = kBlock1x128;
  BlockScalingConfig columnwise;
  columnwise.block = kBlock128x1;
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    const QuantizeResult a = quantize_block_te(x, rows, cols, format, rowwise);
    REQUIRE(a.tensor.scale_rows() == 64);
    REQUIRE(a.tensor.scale_cols() == 3);
    // Row r, block 2: amax over columns 256..299.
    for (std::int64_t r = 0; r < rows; ++r) {
      float amax = 0.0f;
      for (std::int64_t c = 256; c < cols; ++c) {
        amax = std::fmax(amax, std::fabs(x[static_cast<std::size_t>(r * cols + c)]));
      }
      REQUIRE(a.tensor.scale[static_cast<std::size_t>(r * 3 + 2)] ==
              expected_scale(amax, static_cast<float>(spec(format).max_finite()), true,
                             std::numeric_limits<float>::max()));
    }
    // The 128 x 1 copy of x^T's shape [cols, rows] is the transpose of the 1 x 128 copy of x.
    const QuantizeResult b = quantize_block_te(xt, cols, rows, format, columnwise);
    REQUIRE(b.tensor.scale_rows() == 3);
    REQUIRE(b.tensor.scale_cols() == 64);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        REQUIRE(b.tensor.code_at(c, r) == a.tensor.code_at(r, c));
      }
      for (std::int64_t k = 0; k < 3; ++k) {
        REQUIRE(b.tensor.scale[static_cast<std::size_t>(k * 64 + r)] ==
                a.tensor.scale[static_cast<std::size_t>(r * 3 + k)]);
      }
    }
  }
}

TEST_CASE("Block: value_for_inf is the input dtype's max; pow2 can be turned off; eps") {
  CHECK(block_value_for_inf(Format::FP32) == std::numeric_limits<float>::max());
  CHECK(bits(block_value_for_inf(Format::BF16)) == 0x7F7F'0000u);  // 0x1.FEp127
  CHECK(block_value_for_inf(Format::FP16) == 65504.0f);
  CHECK_THROWS_WITH(block_value_for_inf(Format::E4M3), Catch::Contains("input_dtype = e4m3"));

  const std::vector<float> tiny(128, std::ldexp(1.0f, -140));  // 448 / 2^-140 overflows
  BlockScalingConfig config;
  config.pow2 = false;
  config.input_dtype = Format::FP32;
  CHECK(quantize_block_te(tiny, 1, 128, Format::E4M3, config).tensor.scale[0] ==
        std::numeric_limits<float>::max());
  config.input_dtype = Format::BF16;
  CHECK(bits(quantize_block_te(tiny, 1, 128, Format::E4M3, config).tensor.scale[0]) ==
        0x7F7F'0000u);
  config.pow2 = true;  // both round down to 2^127
  CHECK(quantize_block_te(tiny, 1, 128, Format::E4M3, config).tensor.scale[0] ==
        std::ldexp(1.0f, 127));

  const std::vector<float> small(128, 0.5f);
  BlockScalingConfig with_eps;
  with_eps.amax_epsilon = 4.0f;
  CHECK(quantize_block_te(small, 1, 128, Format::E4M3, with_eps).tensor.scale[0] ==
        64.0f);  // 448/4 -> 2^6
}

TEST_CASE("Block: zero, NaN and Inf blocks (TE amax ignores NaN; Inf and 0 give scale 1)") {
  std::vector<float> x(3 * 128, 1.0f);
  for (int i = 0; i < 128; ++i) x[static_cast<std::size_t>(i)] = 0.0f;  // block 0: all zero
  x[128 + 5] = kNaN;                                                    // block 1: one NaN
  x[256 + 7] = -kInf;                                                   // block 2: one -Inf
  const QuantizeResult r = quantize_block_te(x, 3, 128, Format::E4M3);
  CHECK(r.tensor.scale[0] == 1.0f);
  CHECK(r.tensor.scale[1] == 256.0f);  // amax 1 (NaN ignored) -> 448 -> 2^8
  CHECK(r.tensor.scale[2] == 1.0f);
  CHECK(r.tensor.code_at(1, 5) == 0x7F);
  CHECK(r.tensor.code_at(2, 7) == 0xFE);
  CHECK(r.stats.nan == 1);
  CHECK(r.stats.saturated == 1);
}

// te-accelerate.md §5.3: x and dy in 1-D blocks along K (1 x 128 rowwise, 128 x 1 columnwise),
// w in 128 x 128 tiles.
TEST_CASE("Block operand copies per GEMM") {
  const std::vector<float> x(256 * 256, 0.75f);
  auto shape = [&](Gemm g, Operand o) {
    const QuantizeResult r = quantize_block_operand(x, 256, 256, g, o, Format::E4M3);
    return std::pair<std::int64_t, std::int64_t>{r.tensor.block_rows, r.tensor.block_cols};
  };
  using P = std::pair<std::int64_t, std::int64_t>;
  CHECK(shape(Gemm::kFprop, Operand::kInput) == P{1, 128});
  CHECK(shape(Gemm::kFprop, Operand::kWeight) == P{128, 128});
  CHECK(shape(Gemm::kDgrad, Operand::kGradOutput) == P{1, 128});
  CHECK(shape(Gemm::kDgrad, Operand::kWeight) == P{128, 128});
  CHECK(shape(Gemm::kWgrad, Operand::kInput) == P{128, 1});
  CHECK(shape(Gemm::kWgrad, Operand::kGradOutput) == P{128, 1});
  CHECK_THROWS_WITH(shape(Gemm::kWgrad, Operand::kWeight),
                    Catch::Contains("not an operand of gemm = wgrad"));
}
