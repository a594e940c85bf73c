// Exhaustive: sim's encode_e8m0 against CUDA's host-side __nv_cvt_float_to_e8m0 (cuda_fp8.h,
// compiled by g++) with __NV_SATFINITE, on all 2^32 fp32 patterns, for both roundings:
// E8M0Rounding::kUp = cudaRoundPosInf, kDown = cudaRoundZero (docs/numerics.md §1). CUDA's host code
// goes through bf16 (rz of x, or ru of |x|); ours works on the fp32 bits, so agreement here is a
// proof, not a copy.
#include <cuda_fp8.h>

#include <catch2/catch.hpp>

#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace {

using fp8lab::sim::E8M0Rounding;

void check_all_fp32(E8M0Rounding rounding) {
  const cudaRoundMode cuda_rounding = rounding == E8M0Rounding::kUp ? cudaRoundPosInf
                                                                    : cudaRoundZero;
  fp8lab::testing::MismatchLog log;
  fp8lab::testing::log_cuda_mismatches_on_all_fp32(
      log, 2, [&](float x) { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cuda_rounding); },
      [&](float x) { return fp8lab::sim::encode_e8m0(x, rounding); });
  INFO((rounding == E8M0Rounding::kUp ? "kUp (rp)" : "kDown (rz)") << ": " << log.report());
  CHECK(log.count == 0);
}

}  // namespace

TEST_CASE("fp32 -> E8M0 round-up matches cuda_fp8.h (satfinite, cudaRoundPosInf) on all 2^32") {
  check_all_fp32(E8M0Rounding::kUp);
}
TEST_CASE("fp32 -> E8M0 round-down matches cuda_fp8.h (satfinite, cudaRoundZero) on all 2^32") {
  check_all_fp32(E8M0Rounding::kDown);
}
