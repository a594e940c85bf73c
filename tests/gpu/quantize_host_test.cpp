// The per-group code of the quantize kernels (detail::quantize_rn_group: the fast path of
// quantize_rn_four_in_range and its per-element fallback), compiled for the host, against
// sim::quantize: codes and statistics. Runs without a GPU (label fast); gpu_quantize_test runs the
// kernels themselves on a device.
//
// Every pattern of a stride through all 2^32 and all patterns near the adversarial values is put
// into a group of four beside in-range companions (zeros of both signs, an FP8 underflow, ordinary
// values), at each of the four positions in turn: an in-range pattern takes the fast path, any
// other the fallback for its whole group, as in the kernels.
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/quantize_host_twin.hpp"
#include "sim/quantize.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;
using sim::Overflow;

namespace {

constexpr Format kFormats[] = {Format::E4M3, Format::E5M2};
constexpr Overflow kModes[] = {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf};

std::vector<std::uint32_t> patterns() {
  std::vector<std::uint32_t> p;
  for (std::uint64_t b = 0; b < (1ull << 32); b += 997) p.push_back(static_cast<std::uint32_t>(b));
  for (const float v : testing::adversarial_values()) {
    const std::uint32_t center = std::bit_cast<std::uint32_t>(v);
    for (std::uint32_t d = 0; d < 1024; ++d) {
      p.push_back(center + d);
      p.push_back(center - d);
    }
  }
  return p;
}

// Group i: pattern i at position i % 4, companions (in range for both formats at the scales
// below) around it, rotating so that each companion meets each position.
std::array<float, 4> group(std::uint32_t bits, std::uint64_t i) {
  static const float companions[] = {0.0f, -0.0f, 1.0f, std::ldexp(1.0f, -30), -3.5f,
                                     std::ldexp(-1.25f, -9), 100.0f};
  std::array<float, 4> g{};
  for (int k = 0; k < 4; ++k) g[static_cast<std::size_t>(k)] = companions[(i + static_cast<std::uint64_t>(k)) % 7];
  g[i % 4] = std::bit_cast<float>(bits);
  return g;
}

template <typename Stats>
std::string stats_text(const Stats& s) {
  return "amax " + testing::float_text(s.amax) + " count " + std::to_string(s.count) + " saturated " +
         std::to_string(s.saturated) + " underflowed " + std::to_string(s.underflowed) + " nan " +
         std::to_string(s.nan);
}

bool same_stats(const sim::QuantizeStats& a, const gpu::host_twin::QuantizeCounts& b) {
  return testing::same_bits(a.amax, b.amax) && a.count == b.count && a.saturated == b.saturated &&
         a.underflowed == b.underflowed && a.nan == b.nan;
}

}  // namespace

TEST_CASE("host twin of the quantize kernels' groups equals sim::quantize") {
  const std::vector<std::uint32_t> bits = patterns();
  for (const float scale : {1.0f, 0.75f}) {
    for (const Format format : kFormats) {
      for (const Overflow mode : kModes) {
        testing::MismatchLog log;
        testing::parallel_for_u64(0, bits.size(), [&](std::uint64_t i) {
          const std::array<float, 4> x = group(bits[i], i);
          std::array<std::uint8_t, 4> expected{}, actual{};
          const sim::QuantizeStats want = sim::quantize(x, scale, format, mode, expected);
          const gpu::host_twin::QuantizeCounts got =
              gpu::host_twin::quantize_rn_groups(x.data(), 4, scale, format, mode, actual.data());
          for (std::size_t k = 0; k < 4; ++k) {
            if (expected[k] != actual[k]) {
              log.add(testing::code_mismatch("group code", i * 4 + k, x[k], expected[k], actual[k], format));
            }
          }
          if (!same_stats(want, got)) {
            log.add("group " + std::to_string(i) + " (x[" + std::to_string(i % 4) + "] = " +
                    testing::float_text(x[i % 4]) + "): sim " + stats_text(want) + ", gpu " +
                    stats_text(got));
          }
        });
        INFO(sim::spec(format).name << " " << sim::to_string(mode) << " scale " << scale << " over "
                                    << bits.size() << " groups: " << log.report());
        CHECK(log.count == 0);
      }
    }
  }
}

TEST_CASE("host twin of the quantize groups rejects a count that is not a multiple of 4") {
  float x[3] = {1.0f, 2.0f, 3.0f};
  std::uint8_t codes[3];
  CHECK_THROWS_WITH(gpu::host_twin::quantize_rn_groups(x, 3, 1.0f, Format::E4M3, Overflow::kSatFinite, codes),
                    Catch::Contains("n = 3") && Catch::Contains("multiple of 4"));
}
