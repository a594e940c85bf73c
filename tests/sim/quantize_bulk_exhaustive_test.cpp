// Exhaustive: all 2^32 fp32 bit patterns through the dispatched bulk path (sim/quantize.cpp, the
// best SIMD target of this CPU), scale 1, every format x overflow mode.
// - Bytes: equal to the scalar cast cast_fp32_to_fp8 (the definition) on every input.
// - Statistics: equal to counts derived in closed form from the overflow and underflow thresholds
//   of torchao-mx.md §5.4, independently of both implementations (below). The per-element
//   statistics of the bulk path against the scalar reference are in quantize_bulk_test.cpp.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <vector>

#include "sim/quantize.hpp"
#include "tests/support/exhaustive.hpp"
#include "tests/support/quantize_stats.hpp"

using namespace fp8lab::sim;

namespace {

constexpr std::uint64_t kChunk = 1ull << 16;
constexpr std::uint64_t kNanPatterns = 2 * ((1ull << 23) - 1);  // both signs
constexpr std::uint64_t kInfBits = 0x7F80'0000;

std::uint64_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }

// Closed-form statistics over all 2^32 inputs at scale 1. Per sign, the magnitudes form the
// integers 0..0x7F80'0000 (Inf) in value order, so "how many |x| in (a, b]" is bits(b) - bits(a).
QuantizeStats expected_stats(Format format, Overflow mode) {
  QuantizeStats s;
  s.amax = std::numeric_limits<float>::infinity();
  s.count = 1ull << 32;
  // E4M3 overflows above the tie 464 (it rounds to even 448); E5M2 from the tie 61440 up (it
  // rounds to even 65536, past max). E4M3 flushes |x| <= 2^-10 (half the smallest subnormal, a
  // tie to even 0), E5M2 |x| <= 2^-17. §5.4.
  const bool e4m3 = format == Format::E4M3;
  const std::uint64_t overflow_per_sign = e4m3 ? kInfBits - bits_of(464.0f)
                                               : kInfBits - bits_of(61440.0f) + 1;  // Inf included
  const std::uint64_t underflow_per_sign = e4m3 ? bits_of(std::ldexp(1.0f, -10))
                                                : bits_of(std::ldexp(1.0f, -17));  // zero excluded
  s.saturated = 2 * overflow_per_sign;
  s.underflowed = 2 * underflow_per_sign;
  s.nan = kNanPatterns;
  if (e4m3 && mode == Overflow::kNoSat) s.nan += s.saturated;  // every overflow becomes NaN
  if (e4m3 && mode == Overflow::kSatKeepInf) s.nan += 2;       // ±Inf become NaN
  return s;
}

void check_all_fp32(Format format, Overflow mode) {
  fp8lab::testing::MismatchLog log;
  std::mutex merge_mutex;
  QuantizeStats total;
  fp8lab::testing::parallel_for_u64(0, (1ull << 32) / kChunk, [&](std::uint64_t chunk) {
    thread_local std::vector<float> x(kChunk);
    thread_local std::vector<std::uint8_t> q(kChunk);
    const std::uint64_t first = chunk * kChunk;
    for (std::uint64_t i = 0; i < kChunk; ++i)
      x[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
    const QuantizeStats stats = quantize(x, 1.0f, format, mode, q);
    for (std::uint64_t i = 0; i < kChunk; ++i) {
      const std::uint8_t want = cast_fp32_to_fp8(x[i], format, mode);
      if (q[i] != want) {
        char line[160];
        std::snprintf(line, sizeof line, "x = 0x%08X (%.9g): bulk 0x%02X, scalar 0x%02X",
                      static_cast<unsigned>(first + i), static_cast<double>(x[i]), q[i], want);
        log.add(line);
      }
    }
    std::lock_guard lock(merge_mutex);
    total.merge(stats);
  });
  const QuantizeStats want = expected_stats(format, mode);
  INFO(spec(format).name << " " << to_string(mode) << " on " << bulk_target_name() << ": "
                         << log.report());
  CHECK(log.count == 0);
  fp8lab::testing::check_same_stats(total, want);
}

}  // namespace

TEST_CASE("bulk quantize equals the scalar cast on all 2^32 fp32 inputs, E4M3, every mode") {
  for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf}) {
    check_all_fp32(Format::E4M3, mode);
  }
}
TEST_CASE("bulk quantize equals the scalar cast on all 2^32 fp32 inputs, E5M2, every mode") {
  for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf}) {
    check_all_fp32(Format::E5M2, mode);
  }
}
