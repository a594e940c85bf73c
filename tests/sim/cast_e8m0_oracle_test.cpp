// Exhaustive: sim's encode_e8m0 against CUDA's host-side __nv_cvt_float_to_e8m0 (cuda_fp8.h,
// compiled by g++) with __NV_SATFINITE, on all 2^32 fp32 patterns, for both roundings:
// E8M0Rounding::kUp = cudaRoundPosInf, kDown = cudaRoundZero (docs/numerics.md §1). CUDA's host code
// goes through bf16 (rz of x, or ru of |x|); ours works on the fp32 bits, so agreement here is a
// proof, not a copy.
#include <cuda_fp8.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cstdio>

#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace {

using fp8lab::sim::E8M0Rounding;

void check_all_fp32(E8M0Rounding rounding) {
  const cudaRoundMode cuda_rounding = rounding == E8M0Rounding::kUp ? cudaRoundPosInf
                                                                    : cudaRoundZero;
  fp8lab::testing::MismatchLog log;
  fp8lab::testing::parallel_for_u64(0, 1ull << 32, [&](std::uint64_t i) {
    const auto bits = static_cast<std::uint32_t>(i);
    const float x = std::bit_cast<float>(bits);
    const auto expected =
        static_cast<std::uint8_t>(__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cuda_rounding));
    const std::uint8_t actual = fp8lab::sim::encode_e8m0(x, rounding);
    if (expected != actual) {
      char line[160];
      std::snprintf(line, sizeof line, "x = 0x%08X (%.9g): cuda 0x%02X, sim 0x%02X", bits,
                    static_cast<double>(x), expected, actual);
      log.add(line);
    }
  });
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
