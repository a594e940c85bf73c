// Exhaustive: sim's fp32 -> FP8 cast against CUDA's host-side __nv_cvt_float_to_fp8 (cuda_fp8.h,
// compiled by g++) on all 2^32 fp32 bit patterns, E4M3 and E5M2, __NV_SATFINITE and __NV_NOSAT.
// docs/numerics.md §1: 0 mismatches, NaN bytes included (both sides emit CUDA's canonical 0x7F).
#include <cuda_fp8.h>

#include <catch2/catch.hpp>

#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace {

using fp8lab::sim::Format;
using fp8lab::sim::Overflow;

void check_all_fp32(Format format, Overflow mode) {
  const auto interpretation = format == Format::E4M3 ? __NV_E4M3 : __NV_E5M2;
  const auto saturation = mode == Overflow::kSatFinite ? __NV_SATFINITE : __NV_NOSAT;
  fp8lab::testing::MismatchLog log;
  fp8lab::testing::log_cuda_mismatches_on_all_fp32(
      log, 2, [&](float x) { return __nv_cvt_float_to_fp8(x, saturation, interpretation); },
      [&](float x) { return fp8lab::sim::cast_fp32_to_fp8(x, format, mode); });
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
