// Exhaustive: sim's fp32 -> FP8 cast against CUDA's host-side __nv_cvt_float_to_fp8 (cuda_fp8.h,
// compiled by g++) on all 2^32 fp32 bit patterns, E4M3 and E5M2, __NV_SATFINITE and __NV_NOSAT.
// docs/numerics.md §1: 0 mismatches, NaN bytes included (both sides emit CUDA's canonical 0x7F).
#include <cuda_fp8.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cstdio>

#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace {

using fp8lab::sim::Format;
using fp8lab::sim::Overflow;

std::string describe(std::uint32_t bits, std::uint8_t expected, std::uint8_t actual) {
  char line[160];
  std::snprintf(line, sizeof line, "x = 0x%08X (%.9g): cuda 0x%02X, sim 0x%02X", bits,
                static_cast<double>(std::bit_cast<float>(bits)), expected, actual);
  return line;
}

void check_all_fp32(Format format, Overflow mode) {
  const auto interpretation = format == Format::E4M3 ? __NV_E4M3 : __NV_E5M2;
  const auto saturation = mode == Overflow::kSatFinite ? __NV_SATFINITE : __NV_NOSAT;
  fp8lab::testing::MismatchLog log;
  fp8lab::testing::parallel_for_u64(0, 1ull << 32, [&](std::uint64_t i) {
    const auto bits = static_cast<std::uint32_t>(i);
    const float x = std::bit_cast<float>(bits);
    const auto expected =
        static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x, saturation, interpretation));
    const std::uint8_t actual = fp8lab::sim::cast_fp32_to_fp8(x, format, mode);
    if (expected != actual) log.add(describe(bits, expected, actual));
  });
  INFO(fp8lab::sim::spec(format).name << " " << fp8lab::sim::to_string(mode) << ": "
                                      << log.report());
  CHECK(log.count == 0);
}

}  // namespace

TEST_CASE("fp32 -> E4M3 satfinite matches cuda_fp8.h on all 2^32 inputs") {
  check_all_fp32(Format::E4M3, Overflow::kSatFinite);
}
TEST_CASE("fp32 -> E4M3 nosat matches cuda_fp8.h on all 2^32 inputs") {
  check_all_fp32(Format::E4M3, Overflow::kNoSat);
}
TEST_CASE("fp32 -> E5M2 satfinite matches cuda_fp8.h on all 2^32 inputs") {
  check_all_fp32(Format::E5M2, Overflow::kSatFinite);
}
TEST_CASE("fp32 -> E5M2 nosat matches cuda_fp8.h on all 2^32 inputs") {
  check_all_fp32(Format::E5M2, Overflow::kNoSat);
}
