// Exhaustive: sim's fp32 -> E2M1 / E2M3 / E3M2 cast in its CUDA mode (kSubbyteCuda) against CUDA's
// host-side __nv_cvt_float_to_fp4 / __nv_cvt_float_to_fp6 (cuda_fp4.hpp, cuda_fp6.hpp, compiled by
// g++: the emulation of cvt.rn.satfinite.{e2m1x2,e2m3x2,e3m2x2}.f32) on all 2^32 fp32 bit patterns.
// 0 mismatches, NaN inputs included (both sides give +max).
#include <cuda_fp4.h>
#include <cuda_fp6.h>

#include <catch2/catch.hpp>

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
  fp8lab::testing::log_cuda_mismatches_on_all_fp32(
      log, 2, [&](float x) { return cuda_code(x, format); },
      [&](float x) {
        return fp8lab::sim::cast_fp32_to_subbyte(x, format, fp8lab::sim::kSubbyteCuda);
      });
  INFO(fp8lab::sim::spec(format).name << ": " << log.report());
  CHECK(log.count == 0);
}

}  // namespace

TEST_CASE("fp32 -> E2M1 matches cuda_fp4.hpp on all 2^32 inputs") { check_all_fp32(Format::E2M1); }
TEST_CASE("fp32 -> E2M3 matches cuda_fp6.hpp on all 2^32 inputs") { check_all_fp32(Format::E2M3); }
TEST_CASE("fp32 -> E3M2 matches cuda_fp6.hpp on all 2^32 inputs") { check_all_fp32(Format::E3M2); }
