// torchao's power-of-2 rule needs a correctly rounded fp32 log2 (torchao-mx.md §2.2: "computing
// log2 in double and rounding to float works in practice"). We check that claim for every
// positive fp32 scale: sim's exp2f(floorf(RN_f32(log2(double)))) against the same rule with log2
// taken in long double (x87, 64-bit significand), a second, more precise path to RN_f32(log2 x).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "sim/scaling/current.hpp"
#include "tests/support/exhaustive.hpp"

using fp8lab::sim::scaling::torchao_round_scale_down_to_power_of_2;

TEST_CASE(
    "torchao pow2 rounding: double log2 agrees with long double log2 on all positive floats") {
  fp8lab::testing::MismatchLog log;
  // 0x00000001 (smallest subnormal) .. 0x7F800000 (+Inf).
  fp8lab::testing::parallel_for_u64(1, 0x7F80'0001ull, [&](std::uint64_t i) {
    const float s = std::bit_cast<float>(static_cast<std::uint32_t>(i));
    const float got = torchao_round_scale_down_to_power_of_2(s);
    const auto log2_rn = static_cast<float>(std::log2(static_cast<long double>(s)));
    const float expected = std::exp2(std::floor(log2_rn));
    if (std::bit_cast<std::uint32_t>(got) != std::bit_cast<std::uint32_t>(expected)) {
      std::ostringstream line;
      line << std::hex << "scale 0x" << i << ": got 0x" << std::bit_cast<std::uint32_t>(got)
           << ", long double path 0x" << std::bit_cast<std::uint32_t>(expected);
      log.add(line.str());
    }
  });
  INFO(log.report());
  CHECK(log.count == 0);
}
