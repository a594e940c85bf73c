// mx_scale_codes (sim/scaling/mx_codes.hpp), the vectorized MX scale rule, against its definition
// (mx_scale_code of sim/scaling/mx.cpp with the block's NaN folded in as quantize_mx does), code
// for code, on every SIMD target Highway compiled that this CPU runs (STYLE.md §9): every mode x
// torchao version x element format, on amaxes at and around every binade's boundaries and
// around every fp8_max * 2^k (where the scale rules change code, and where torchao-0.18's fp32
// log2 rounds onto the power itself), special values (0, subnormals, FLT_MAX, +Inf, NaN),
// random amaxes with random NaN flags, and lengths that leave a scalar tail.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/scaling/common.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/mx_codes.hpp"
#include "tests/sim/quantize_targets.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;

namespace {

constexpr E8M0Mode kModes[] = {E8M0Mode::kTe, E8M0Mode::kFloor, E8M0Mode::kCeil, E8M0Mode::kEven,
                               E8M0Mode::kRceil};
constexpr TorchaoVersion kVersions[] = {TorchaoVersion::kV0_18, TorchaoVersion::kMain};

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// Bit patterns of non-negative amaxes (an amax is >= +0 or NaN).
std::vector<float> adversarial_amaxes() {
  std::vector<std::uint32_t> bits;
  // Every exponent field with the smallest and largest mantissas (binade edges, where floor /
  // ceil / rceil change code, and M near 0x40'0000 for E == 0's 2^-127 rule).
  for (std::uint32_t e = 0; e < 255; ++e) {
    for (std::uint32_t m = 0; m < 200; ++m) bits.push_back((e << 23) | m);
    for (std::uint32_t m = 0x7F'FFFF - 40; m <= 0x7F'FFFF; ++m) bits.push_back((e << 23) | m);
    for (std::uint32_t m = 0x40'0000 - 3; m <= 0x40'0000 + 3; ++m) bits.push_back((e << 23) | m);
  }
  // Around fp8_max * 2^k for each format: amax / fp8_max (or * RCP) near a power of two, where
  // torchao-0.18's log2 rounding, the RCP product's rounding and even's carry decide the code.
  for (const Format f : kFp8Formats) {
    for (int k = -140; k <= 130; ++k) {
      const float centre = std::ldexp(fp8_max(f), k);
      if (!std::isfinite(centre) || centre == 0.0f) continue;
      const auto c = std::bit_cast<std::uint32_t>(centre);
      for (std::uint32_t d = 0; d <= 300; ++d) {
        bits.push_back(c + d);
        if (c >= d) bits.push_back(c - d);
      }
    }
  }
  bits.push_back(0x7F80'0000u);  // +Inf
  bits.push_back(0x7FC0'0000u);  // quiet NaN
  bits.push_back(0x7F80'0001u);  // NaN with the smallest payload
  bits.push_back(0x7FFF'FFFFu);
  std::vector<float> amaxes;
  amaxes.reserve(bits.size());
  for (const std::uint32_t b : bits) amaxes.push_back(from_bits(b));
  return amaxes;
}

std::vector<float> random_amaxes(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::uint32_t> pattern(0, 0x7F80'0000u);  // +0 .. +Inf
  std::vector<float> amaxes(n);
  for (float& a : amaxes) a = from_bits(pattern(gen));
  return amaxes;
}

std::vector<std::uint8_t> random_flags(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> flags(n);
  for (std::uint8_t& f : flags) f = static_cast<std::uint8_t>(gen() % 7 == 0);
  return flags;
}

void check_codes(const std::vector<float>& amax, const std::vector<std::uint8_t>& has_nan,
                 const char* what) {
  for (const Format f : kFp8Formats) {
    for (const E8M0Mode mode : kModes) {
      for (const TorchaoVersion version : kVersions) {
        std::vector<std::uint8_t> got(amax.size(), 0xA5);
        mx_scale_codes(amax, has_nan, f, mode, version, got);
        std::size_t wrong = amax.size();
        std::uint8_t want_code = 0;
        for (std::size_t j = 0; j < amax.size(); ++j) {
          const float a = (has_nan[j] != 0 && mode != E8M0Mode::kTe)
                              ? std::numeric_limits<float>::quiet_NaN()
                              : amax[j];
          want_code = mx_scale_code(a, f, mode, version);
          if (got[j] != want_code) {
            wrong = j;
            break;
          }
        }
        INFO(what << " on " << bulk_target_name() << ", " << spec(f).name << " " << to_string(mode)
                  << " " << to_string(version) << ", n " << amax.size());
        if (wrong < amax.size()) {
          char line[160];
          std::snprintf(line, sizeof line,
                        "block %zu, amax bits 0x%08X, has_nan %d: vector 0x%02X, scalar 0x%02X",
                        wrong, std::bit_cast<std::uint32_t>(amax[wrong]), has_nan[wrong],
                        got[wrong], want_code);
          FAIL(line);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("mx_scale_codes equals mx_scale_code on binade edges and around fp8_max * 2^k") {
  std::vector<float> amax = adversarial_amaxes();
  // Shuffled so that each pattern meets every lane position and vectors mix the blocks that
  // torchao-0.18's rceil sends to the scalar rule with those it does not.
  std::shuffle(amax.begin(), amax.end(), std::mt19937(20261202));
  const std::vector<std::uint8_t> no_nan(amax.size(), 0);
  const std::vector<std::uint8_t> some_nan = random_flags(amax.size(), 7);
  fp8lab::testing::for_each_simd_target([&] {
    check_codes(amax, no_nan, "adversarial amaxes");
    check_codes(amax, some_nan, "adversarial amaxes, random NaN flags");
  });
}

TEST_CASE("mx_scale_codes equals mx_scale_code on random amaxes and lengths with a tail") {
  fp8lab::testing::for_each_simd_target([&] {
    for (const std::size_t n : {0, 1, 7, 15, 16, 17, 33, 128, 1000, 4099}) {
      const auto seed = static_cast<std::uint32_t>(n) + 11;
      check_codes(random_amaxes(n, seed), random_flags(n, seed + 1), "random amaxes");
    }
  });
}

TEST_CASE("mx_scale_codes rejects spans of different lengths") {
  const std::vector<float> amax(4, 1.0f);
  const std::vector<std::uint8_t> three(3, 0);
  std::vector<std::uint8_t> codes(4);
  CHECK_THROWS_AS(
      mx_scale_codes(amax, three, Format::E4M3, E8M0Mode::kTe, TorchaoVersion::kV0_18, codes),
      std::invalid_argument);
}
