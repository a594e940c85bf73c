// The exact model (gemm.hpp): block sums without rounding, combined in float64; the reference
// against which the hopper and fp32_seq errors are measured.
#include <cmath>
#include <limits>

#include "tests/sim/gemm_test_support.hpp"

namespace fp8lab::testing {
namespace {

using sim::Accumulation;
using sim::GemmOperand;

TEST_CASE("exact keeps what fp32 and hopper lose to cancellation") {
  // 448 * 448 + 2^-9 * 2^-9 - 448 * 448: fp32 absorbs 2^-18 into 200704 (ulp 2^-6) and returns
  // 0; the exact sum is 2^-18.
  const auto a = per_tensor(1, 3, Format::E4M3,
                            {code_of(448.0f, Format::E4M3), code_of(0x1p-9f, Format::E4M3),
                             code_of(-448.0f, Format::E4M3)});
  const auto b = per_tensor(1, 3, Format::E4M3,
                            {code_of(448.0f, Format::E4M3), code_of(0x1p-9f, Format::E4M3),
                             code_of(448.0f, Format::E4M3)});
  const GemmOperand ga{a, ReduceDim::kCols}, gb{b, ReduceDim::kCols};
  CHECK(sim::gemm_exact(ga, gb)[0] == 0x1p-18);
  sim::GemmOptions options;
  options.accumulation = Accumulation::kExact;
  CHECK(sim::gemm(ga, gb, options)[0] == 0x1p-18f);
  CHECK(sim::gemm(ga, gb, {})[0] == 0.0f);
  // With bias, float64 throughout.
  const std::vector<float> bias = {1.0f};
  CHECK(sim::gemm_exact(ga, gb, bias)[0] == 1.0 + 0x1p-18);
}

TEST_CASE("exact combines block sums with their scales in float64") {
  // MX blocks of 32 along K = 64: block 0 sums 32 * (1 * 1) = 32 with scales 2^-3 * 2^2,
  // block 1 sums 32 * (2 * -0.5) = -32 with scales 2^5 * 2^-1: 32 * 0.5 - 32 * 16 = -496.
  QuantizedTensor a = per_tensor(1, 64, Format::E4M3, {});
  QuantizedTensor b = per_tensor(1, 64, Format::E5M2, {});
  for (int k = 0; k < 64; ++k) {
    a.data.push_back(code_of(k < 32 ? 1.0f : 2.0f, Format::E4M3));
    b.data.push_back(code_of(k < 32 ? 1.0f : -0.5f, Format::E5M2));
  }
  a.block_cols = b.block_cols = 32;
  a.scale_inv = {0x1p-3f, 0x1p5f};
  b.scale_inv = {0x1p2f, 0x1p-1f};
  const GemmOperand ga{a, ReduceDim::kCols}, gb{b, ReduceDim::kCols};
  CHECK(sim::gemm_exact(ga, gb)[0] == -496.0);
  CHECK(sim::gemm(ga, gb, {})[0] == -496.0f);  // every step exact in fp32 here too
}

TEST_CASE("exact: NaN and Inf give the float64 sum's NaN or Inf") {
  const float inf = std::numeric_limits<float>::infinity();
  const auto a =
      per_tensor(1, 2, Format::E5M2, {code_of(inf, Format::E5M2), code_of(1.0f, Format::E5M2)});
  const auto b = per_tensor(2, 2, Format::E5M2,
                            {code_of(1.0f, Format::E5M2), code_of(1.0f, Format::E5M2),
                             code_of(0.0f, Format::E5M2), code_of(1.0f, Format::E5M2)});
  const auto out = sim::gemm_exact({a, ReduceDim::kCols}, {b, ReduceDim::kCols});
  CHECK(out[0] == static_cast<double>(inf));
  CHECK(std::isnan(out[1]));  // Inf * 0
}

}  // namespace
}  // namespace fp8lab::testing
