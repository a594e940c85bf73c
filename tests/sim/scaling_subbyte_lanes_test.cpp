// The sub-byte element cast of the blocked walk in Highway lanes (sim/scaling/subbyte_lanes.hpp)
// against the scalar model, code for code and count for count, on every SIMD target Highway
// compiled that this CPU runs (STYLE.md §9): E2M1, E2M3 and E3M2 under every SubbyteSpecials
// preset, on fp32 values from 2^-12 to 2^9 at a stride that keeps each binade's ties and their
// neighbours, special values (±0, ±Inf, NaNs, subnormals, max and the saturation threshold),
// per-column and per-block multipliers, a block that is not a multiple of the lanes (the scalar
// fallback) and rows with a scalar tail. Then the quantizers that use it: MX and NVFP4 codes
// equal the scalar cast of x times the block multiplier, and NVFP4's stochastic rounding equals
// e2m1_stochastic_code with the element's byte, on every target.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/cast.hpp"
#include "sim/fp4_stochastic.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/subbyte_lanes.hpp"
#include "tests/sim/quantize_targets.hpp"

namespace fp8lab::testing {
namespace {

namespace sc = sim::scaling;
using sim::Format;

constexpr Format kFormats[] = {Format::E2M1, Format::E2M3, Format::E3M2};

// The value sweep: every exponent from -12 (below every format's half smallest subnormal, 2^-5)
// to 8 (above every max), mantissas k << 13 (every tie of every grid these formats have at these
// exponents: their rounding bit is at bit 19 or above) and one ulp either side, both signs; then
// specials scattered among them so that vectors mix the two.
// Elements of a block-scaled tensor whose code differs from the scalar cast of x * its block's
// scale (the lanes kernels must equal sim::cast_fp32_to_subbyte element for element).
template <typename Tensor>
std::size_t scalar_cast_mismatches(const Tensor& t, const std::vector<float>& x, std::int64_t R,
                                   std::int64_t C, Format format) {
  std::size_t mismatches = 0;
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t c = 0; c < C; ++c) {
      const float s = t.scale[(r / t.block_rows) * t.scale_cols() + c / t.block_cols];
      const auto i = static_cast<std::size_t>(r * C + c);
      if (t.data[i] != sim::cast_fp32_to_subbyte(x[i] * s, format, sim::kSubbyteCuda)) ++mismatches;
    }
  }
  return mismatches;
}

std::vector<float> sweep_values() {
  std::vector<float> x;
  for (std::uint32_t e = 127 - 12; e <= 127 + 8; ++e) {
    for (std::uint32_t k = 0; k < (1u << 10); ++k) {
      for (const std::uint32_t low : {0u, 1u, 0x1FFFu}) {
        const float v = std::bit_cast<float>((e << 23) | (k << 13) | low);
        x.push_back(v);
        x.push_back(-v);
      }
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f,
                            -0.0f,
                            inf,
                            -inf,
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::bit_cast<float>(0x7F80'0001u),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            6.0f,
                            6.5f,
                            std::nextafter(7.0f, 0.0f),
                            7.0f,
                            7.5f,
                            7.75f,
                            28.0f,
                            30.0f,
                            32.0f,
                            0.25f,
                            0.0625f,
                            0.03125f};
  std::mt19937 rng(46);
  for (std::size_t i = 0; i < x.size(); i += 1 + rng() % 97) {
    x[i] = specials[rng() % std::size(specials)];
  }
  return x;
}

struct Layout {
  std::size_t cols;
  std::size_t run;  // columns per multiplier
};

void check_rows(const std::vector<float>& x, Layout layout, const std::vector<float>& scales,
                Format format, sim::SubbyteSpecials specials) {
  const std::size_t n = x.size() / layout.cols * layout.cols;
  std::vector<std::uint8_t> expected(n), got(n, 0xAA);
  const auto want = sc::subbyte_detail::subbyte_rows_scalar(
      x.data(), n, layout.cols, scales.data(), layout.run, format, specials, expected.data());
  for_each_simd_target([&] {
    REQUIRE(std::string(sc::subbyte_detail::subbyte_rows_target_name()) ==
            std::string(sim::bulk_target_name()));
    const auto stats = sc::subbyte_detail::subbyte_rows_lanes(
        x.data(), n, layout.cols, scales.data(), layout.run, format, specials, got.data());
    std::size_t mismatches = 0, at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (expected[i] != got[i] && mismatches++ == 0) at = i;
    }
    INFO("format " << sim::spec(format).name << ", cols " << layout.cols << ", run " << layout.run
                   << "; first mismatch at " << at << ": x " << x[at] << " times "
                   << scales[(at % layout.cols) / layout.run] << ", expected " << int{expected[at]}
                   << ", got " << int{got[at]});
    CHECK(mismatches == 0);
    CHECK(stats.count == want.count);
    CHECK(stats.saturated == want.saturated);
    CHECK(stats.underflowed == want.underflowed);
    CHECK(stats.nan == want.nan);
  });
}

TEST_CASE("subbyte_rows_lanes gives the scalar cast's codes and counts, every target") {
  const auto x = sweep_values();
  std::mt19937 rng(7);
  for (const Format format : kFormats) {
    for (const auto& mode : sim::kSubbyteModes) {
      INFO("specials " << mode.name);
      // One multiplier of 1 per column: the sweep itself.
      check_rows(x, {64, 1}, std::vector<float>(64, 1.0f), format, mode.specials);
    }
    // Multipliers per column and per block of 16 and 32, powers of two and arbitrary values,
    // a 0 (Inf * 0 and 0 * 0) and an Inf multiplier; rows of 48 (no tail on any target) and 40
    // (a tail); a run of 3 (the scalar fallback on every target with more than one lane).
    std::vector<float> scales(64);
    for (auto& s : scales) {
      s = rng() % 2 ? std::ldexp(1.0f, static_cast<int>(rng() % 9) - 4)
                    : std::uniform_real_distribution<float>(0.01f, 10.0f)(rng);
    }
    scales[5] = 0.0f;
    scales[11] = std::numeric_limits<float>::infinity();
    for (const Layout layout : {Layout{48, 1}, Layout{48, 16}, Layout{64, 32}, Layout{40, 1},
                                Layout{40, 16}, Layout{48, 3}}) {
      check_rows(x, layout, scales, format, sim::kSubbyteCuda);
      check_rows(x, layout, scales, format, sim::kSubbyteTeReference);
    }
  }
}

std::vector<float> random_tensor(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 12) - 6);
  x[3] = 0.0f;
  x[40] = -0.0f;
  x[77] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

TEST_CASE("MX and NVFP4 codes are the scalar cast of x times the block multiplier, every target") {
  constexpr std::int64_t R = 48, C = 80;
  const auto x = random_tensor(R * C, 3);
  for_each_simd_target([&] {
    for (const Format format : kFormats) {
      for (const auto axis : {sc::ScaleAxis::kRowwise, sc::ScaleAxis::kColumnwise}) {
        const auto q = sc::quantize_mx(x, R, C, axis, format);
        INFO("MX " << sim::spec(format).name << " axis " << static_cast<int>(axis));
        CHECK(scalar_cast_mismatches(q.tensor, x, R, C, format) == 0);
      }
    }
    for (const sc::BlockShape block :
         {sc::BlockShape{1, 16}, sc::BlockShape{16, 1}, sc::BlockShape{16, 16}}) {
      const auto q = sc::quantize_nvfp4(x, R, C, block, sc::Nvfp4Mode::kTe);
      INFO("NVFP4 block " << block.rows << " x " << block.cols);
      CHECK(scalar_cast_mismatches(q.tensor, x, R, C, Format::E2M1) == 0);
    }
  });
}

TEST_CASE("NVFP4's stochastic rounding is e2m1_stochastic_code with the element's byte, every "
          "target") {
  // 37 columns: rows start at element indices that are not multiples of 4.
  constexpr std::int64_t R = 32, C = 37;
  const auto x = random_tensor(R * C, 5);
  const sc::StochasticStream stream{11, 3};
  for_each_simd_target([&] {
    for (const sc::BlockShape block : {sc::BlockShape{1, 16}, sc::BlockShape{16, 1}}) {
      const auto q = sc::quantize_nvfp4(x, R, C, block, sc::Nvfp4Mode::kTe, &stream);
      const auto& t = q.tensor;
      std::size_t mismatches = 0;
      std::uint64_t underflowed = 0;
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t c = 0; c < C; ++c) {
          const float s = t.scale[(r / t.block_rows) * t.scale_cols() + c / t.block_cols];
          const auto i = static_cast<std::size_t>(r * C + c);
          const float y = x[i] * s;
          const std::uint8_t code = sim::e2m1_stochastic_code(
              y, sim::e2m1_stochastic_byte(stream.seed, stream.stream, i));
          if (t.data[i] != code) ++mismatches;
          if (x[i] != 0.0f && !std::isnan(y) && (code & 0x7u) == 0) ++underflowed;
        }
      }
      INFO("NVFP4 block " << block.rows << " x " << block.cols);
      CHECK(mismatches == 0);
      CHECK(q.stats.underflowed == underflowed);
    }
  });
}

}  // namespace
}  // namespace fp8lab::testing
