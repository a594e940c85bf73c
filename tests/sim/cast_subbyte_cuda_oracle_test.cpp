// Exhaustive: sim's fp32 -> E2M1 / E2M3 / E3M2 cast in its CUDA mode (kSubbyteCuda) against CUDA's
// host-side __nv_cvt_float_to_fp4 / __nv_cvt_float_to_fp6 (cuda_fp4.hpp, cuda_fp6.hpp, compiled by
// g++: the emulation of cvt.rn.satfinite.{e2m1x2,e2m3x2,e3m2x2}.f32) on all 2^32 fp32 bit patterns.
// 0 mismatches, NaN inputs included (both sides give +max).
#include <cuda_fp4.h>
#include <cuda_fp6.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cstdio>

#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace {

using fp8lab::sim::Format;

std::uint8_t cuda_code(float x, Format format) {
  switch (format) {
    case Format::E2M1: return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
    case Format::E2M3: return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest);
    default: return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest);
  }
}

void check_all_fp32(Format format) {
  fp8lab::testing::MismatchLog log;
  fp8lab::testing::parallel_for_u64(0, 1ull << 32, [&](std::uint64_t i) {
    const auto bits = static_cast<std::uint32_t>(i);
    const float x = std::bit_cast<float>(bits);
    const std::uint8_t expected = cuda_code(x, format);
    const std::uint8_t actual =
        fp8lab::sim::cast_fp32_to_subbyte(x, format, fp8lab::sim::kSubbyteCuda);
    if (expected != actual) {
      char line[160];
      std::snprintf(line, sizeof line, "x = 0x%08X (%.9g): cuda 0x%02X, sim 0x%02X", bits,
                    static_cast<double>(x), expected, actual);
      log.add(line);
    }
  });
  INFO(fp8lab::sim::spec(format).name << ": " << log.report());
  CHECK(log.count == 0);
}

}  // namespace

TEST_CASE("fp32 -> E2M1 matches cuda_fp4.hpp on all 2^32 inputs") { check_all_fp32(Format::E2M1); }
TEST_CASE("fp32 -> E2M3 matches cuda_fp6.hpp on all 2^32 inputs") { check_all_fp32(Format::E2M3); }
TEST_CASE("fp32 -> E3M2 matches cuda_fp6.hpp on all 2^32 inputs") { check_all_fp32(Format::E3M2); }
