// The per-group code of the quantize kernels (detail::quantize_rn_group: the fast path of
// quantize_rn_four_in_range and its per-element fallback; detail::quantize_stochastic_group),
// compiled for the host, against sim::quantize and sim::quantize_stochastic: codes and statistics. Runs without a GPU (label fast); gpu_quantize_test runs the
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
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/quantize_host_twin.hpp"
#include "gpu/quantize_layout.hpp"
#include "sim/quantize.hpp"
#include "tests/gpu/check_results.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;
using sim::Overflow;

namespace {

std::vector<std::uint32_t> patterns() {
  return testing::stride_and_adversarial_patterns(997, 1024);
}

// Group i: pattern i at position i % 4, companions (in range for both formats at the scales
// below) around it, rotating so that each companion meets each position.
std::array<float, 4> group(std::uint32_t bits, std::uint64_t i) {
  static const float companions[] = {
      0.0f, -0.0f, 1.0f, std::ldexp(1.0f, -30), -3.5f, std::ldexp(-1.25f, -9), 100.0f};
  std::array<float, 4> g{};
  for (int k = 0; k < 4; ++k)
    g[static_cast<std::size_t>(k)] = companions[(i + static_cast<std::uint64_t>(k)) % 7];
  g[i % 4] = std::bit_cast<float>(bits);
  return g;
}

template <typename Stats>
std::string stats_text(const Stats& s) {
  return "amax " + testing::float_text(s.amax) + " count " + std::to_string(s.count) +
         " saturated " + std::to_string(s.saturated) + " underflowed " +
         std::to_string(s.underflowed) + " nan " + std::to_string(s.nan);
}

bool same_stats(const sim::QuantizeStats& a, const gpu::host_twin::QuantizeCounts& b) {
  return testing::same_bits(a.amax, b.amax) && a.count == b.count && a.saturated == b.saturated &&
         a.underflowed == b.underflowed && a.nan == b.nan;
}

// Logs every code of group i that differs from sim's, and the group's statistics if they differ.
void log_group_differences(testing::MismatchLog& log, const char* what, std::uint64_t i,
                           const std::array<float, 4>& x,
                           const std::array<std::uint8_t, 4>& expected,
                           const std::array<std::uint8_t, 4>& actual,
                           const sim::QuantizeStats& want,
                           const gpu::host_twin::QuantizeCounts& got, Format format) {
  for (std::size_t k = 0; k < 4; ++k) {
    if (expected[k] != actual[k]) {
      log.add(testing::code_mismatch(what, i * 4 + k, x[k], expected[k], actual[k], format));
    }
  }
  if (!same_stats(want, got)) {
    log.add("group " + std::to_string(i) + " (x[" + std::to_string(i % 4) +
            "] = " + testing::float_text(x[i % 4]) + "): sim " + stats_text(want) + ", gpu " +
            stats_text(got));
  }
}

// What a failure names besides format and mode: "scale 0.75 over N groups".
std::string over_groups(float scale, std::size_t groups) {
  std::ostringstream text;
  text << "scale " << scale << " over " << groups << " groups";
  return text.str();
}

}  // namespace

TEST_CASE("host twin of the quantize kernels' groups equals sim::quantize") {
  const std::vector<std::uint32_t> bits = patterns();
  for (const float scale : {1.0f, 0.75f}) {
    testing::check_every_format_and_mode(
        bits.size(), over_groups(scale, bits.size()),
        [&](testing::MismatchLog& log, std::uint64_t i, Format format, Overflow mode) {
          const std::array<float, 4> x = group(bits[i], i);
          std::array<std::uint8_t, 4> expected{}, actual{};
          const sim::QuantizeStats want = sim::quantize(x, scale, format, mode, expected);
          const gpu::host_twin::QuantizeCounts got =
              gpu::host_twin::quantize_rn_groups(x.data(), 4, scale, format, mode, actual.data());
          log_group_differences(log, "group code", i, x, expected, actual, want, got, format);
        });
  }
}

TEST_CASE("host twin of the stochastic quantize groups equals sim::quantize_stochastic") {
  // Fewer patterns than the RNE case (Philox blocks): a stride through all 2^32 and
  // the neighbourhoods of the adversarial values; the random words differ from group to group.
  const std::vector<std::uint32_t> bits = testing::stride_and_adversarial_patterns(9973, 256);
  constexpr std::uint64_t kSeed = 0x5EED'0000'1234ull, kStream = 9;
  for (const float scale : {1.0f, 0.75f}) {
    testing::check_every_format_and_mode(
        bits.size(), over_groups(scale, bits.size()),
        [&](testing::MismatchLog& log, std::uint64_t i, Format format, Overflow mode) {
          const std::array<float, 4> x = group(bits[i], i);
          // Crosses 2^32 on the way; i % 4 puts the group at each position within a Philox block
          // (a group then spans two blocks).
          const std::uint64_t first_index = 4 * i + (1ull << 32) - 64 + i % 4;
          std::array<std::uint8_t, 4> expected{}, actual{};
          const sim::QuantizeStats want = sim::quantize_stochastic(x, scale, format, mode, kSeed,
                                                                   kStream, first_index, expected);
          const gpu::host_twin::QuantizeCounts got = gpu::host_twin::quantize_stochastic_groups(
              x.data(), 4, scale, format, mode, kSeed, kStream, first_index, actual.data());
          log_group_differences(log, "stochastic code", i, x, expected, actual, want, got, format);
        });
  }
}

TEST_CASE("all_rn_in_range of a block (amax, NaN) equals rn_in_range of every scaled value") {
  // The row-block kernels decide the fast path for 16 values from their amax alone
  // (gpu/quantize_common.cuh, all_rn_in_range). Blocks of 16 from random patterns, adversarial
  // values and moderate values, at scales from 0 to Inf and NaN: equal to testing every value for
  // scale >= 0, never true when a value is out of range for any scale.
  std::mt19937_64 rng(testing::seed_from("all_rn_in_range"));
  const std::vector<float> special = testing::adversarial_values();
  const float inf = std::numeric_limits<float>::infinity();
  const float scales[] = {0.0f,
                          1.0f,
                          0.75f,
                          3.0f,
                          448.0f / 3.1f,
                          65536.0f,
                          std::ldexp(1.0f, -30),
                          std::ldexp(1.0f, 40),
                          std::numeric_limits<float>::denorm_min(),
                          inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          -1.0f};
  std::uniform_int_distribution<int> exponent(-30, 12);
  for (const Format format : sim::kFp8Formats) {
    std::uint64_t mismatches = 0, fast = 0, slow = 0;
    std::string first;
    for (int b = 0; b < 200000; ++b) {
      std::array<float, 16> x{};
      const int kind = b % 3;  // moderate values; with a special; random bit patterns
      for (auto& v : x) {
        v = kind == 2
                ? std::bit_cast<float>(static_cast<std::uint32_t>(rng()))
                : std::ldexp(1.0f + static_cast<float>(rng() % 1024) / 1024.0f, exponent(rng)) *
                      ((rng() & 1) != 0 ? -1.0f : 1.0f);
      }
      if (kind == 1) x[rng() % 16] = special[rng() % special.size()];
      for (const float scale : scales) {
        bool every = true;
        for (const float v : x) every = every && gpu::host_twin::rn_in_range(v * scale, format);
        const bool block = gpu::host_twin::all_rn_in_range(x.data(), 16, scale, format);
        (block ? fast : slow) += 1;
        const bool ok = scale < 0.0f ? (!block || every) : block == every;
        if (!ok && mismatches++ == 0) {
          first = "block " + std::to_string(b) + " scale " + testing::float_text(scale) +
                  ": every " + std::to_string(every) + ", block " + std::to_string(block);
        }
      }
    }
    INFO(sim::spec(format).name << ": " << mismatches << " mismatches " << first << " (fast "
                                << fast << ", slow " << slow << ")");
    CHECK(mismatches == 0);
    CHECK(fast > 100000);
    CHECK(slow > 100000);
  }
}

TEST_CASE("host twin of the quantize groups rejects a count that is not a multiple of 4") {
  float x[3] = {1.0f, 2.0f, 3.0f};
  std::uint8_t codes[3];
  CHECK_THROWS_WITH(
      gpu::host_twin::quantize_rn_groups(x, 3, 1.0f, Format::E4M3, Overflow::kSatFinite, codes),
      Catch::Contains("n = 3") && Catch::Contains("multiple of 4"));
}

TEST_CASE("quantize kernels' layout: head, chunks and tail cover each element once, aligned") {
  namespace layout = gpu::layout;
  // Addresses as the tests and callers make them: an aligned allocation plus an element offset.
  constexpr std::uintptr_t kBase = 0x7f00'0000'0000u;
  std::vector<std::int64_t> sizes;
  for (std::int64_t n = 0; n <= 2100; ++n) sizes.push_back(n);
  for (const std::int64_t n : {4095, 4096, 4097, 65536 + 1023}) sizes.push_back(n);
  for (const int in_bytes : {4, 2}) {
    const int load = layout::per_load(in_bytes);
    const int step = layout::kLoads * load;
    for (int x_offset = 0; x_offset < 8; ++x_offset) {
      for (int out_offset = 0; out_offset < 8; ++out_offset) {
        const std::uintptr_t x = kBase + static_cast<std::uintptr_t>(x_offset * in_bytes);
        const std::uintptr_t out = kBase + static_cast<std::uintptr_t>(out_offset);
        for (const std::int64_t n : sizes) {
          const layout::Partition p = layout::partition(x, out, n, in_bytes);
          INFO("in_bytes " << in_bytes << " x offset " << x_offset << " out offset " << out_offset
                           << " n " << n << ": head " << p.head << " chunks " << p.chunks
                           << " tail from " << p.tail_begin);
          REQUIRE((p.head >= 0 && p.head <= n && p.tail_begin <= n));
          REQUIRE(n - p.tail_begin < layout::chunk_values(in_bytes));
          // All scalar (head = n) only when no head below `load` aligns both pointers.
          if (p.head == n && n >= load) {
            for (int h = 0; h < load; ++h) {
              const bool both =
                  (x + static_cast<std::uintptr_t>(h * in_bytes)) % 16 == 0 &&
                  (out + static_cast<std::uintptr_t>(h)) % static_cast<std::uintptr_t>(load) == 0;
              REQUIRE_FALSE(both);
            }
          }
          std::vector<int> seen(static_cast<std::size_t>(n), 0);
          for (std::int64_t i = 0; i < p.head; ++i) ++seen[static_cast<std::size_t>(i)];
          for (std::int64_t i = p.tail_begin; i < n; ++i) ++seen[static_cast<std::size_t>(i)];
          for (std::int64_t chunk = 0; chunk < p.chunks; ++chunk) {
            for (int lane = 0; lane < 32; ++lane) {
              for (int k = 0; k < step; ++k) {
                const std::int64_t i = layout::chunk_value(p.head, chunk, lane, k, in_bytes);
                if (i < p.head || i >= p.tail_begin) {
                  FAIL("chunk " << chunk << " lane " << lane << " value " << k << " -> " << i);
                }
                ++seen[static_cast<std::size_t>(i)];
                // A 16-byte load (and its code store) starts aligned and holds consecutive values.
                const bool starts_aligned =
                    (x + static_cast<std::uintptr_t>(i * in_bytes)) % 16 == 0 &&
                    (out + static_cast<std::uintptr_t>(i)) % static_cast<std::uintptr_t>(load) == 0;
                const bool consecutive =
                    k % load == 0 ||
                    layout::chunk_value(p.head, chunk, lane, k - 1, in_bytes) == i - 1;
                if ((k % load == 0 && !starts_aligned) || !consecutive) {
                  FAIL("chunk " << chunk << " lane " << lane << " value " << k << " at " << i
                                << ": aligned " << starts_aligned << ", consecutive "
                                << consecutive);
                }
              }
            }
          }
          std::int64_t wrong = 0;
          for (const int count : seen) wrong += count == 1 ? 0 : 1;
          REQUIRE(wrong == 0);  // every element quantized exactly once
        }
      }
    }
  }
}
