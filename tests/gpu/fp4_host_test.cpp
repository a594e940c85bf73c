// The FP4/FP6 quantizers' and the RHT's per-block code (gpu/scaling/fp4_rules.cuh, compiled for
// the host: gpu::scaling::host_twin) against sim/, without a GPU (label fast): the sub-byte cast on
// strided and adversarial fp32 patterns in every format and NaN mode, then the cases that
// gpu_fp4_test runs on the device (experiments/gpu_check/fp4_checks.cpp).
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/scaling/fp4.hpp"
#include "sim/cast.hpp"
#include "tests/gpu/inputs.hpp"

using namespace fp8lab;
using sim::Format;

TEST_CASE("host twin of the device sub-byte cast equals sim::cast_fp32_to_subbyte") {
  const std::vector<std::uint32_t> bits = testing::stride_and_adversarial_patterns(97, 2048);
  std::uint64_t compared = 0;
  for (const Format f : {Format::E2M1, Format::E2M3, Format::E3M2}) {
    for (const auto& [name, specials] : sim::kSubbyteModes) {
      std::uint64_t mismatches = 0;
      std::uint32_t first = 0;
      for (const std::uint32_t b : bits) {
        const float x = std::bit_cast<float>(b);
        if (gpu::scaling::host_twin::cast_subbyte(x, f, specials) !=
            sim::cast_fp32_to_subbyte(x, f, specials)) {
          if (mismatches++ == 0) first = b;
        }
      }
      INFO(sim::spec(f).name << " " << name << ": first mismatch at bits 0x" << std::hex << first
                             << " (of " << std::dec << bits.size() << " patterns)");
      CHECK(mismatches == 0);
      compared += bits.size();
    }
  }
  CHECK(compared == 3 * 5 * bits.size());
}

TEST_CASE("host twins of the FP4/FP6 quantizers and the RHT equal sim") {
  const auto results = experiments::gpu_check::check_fp4_kernels(true);
  CHECK(results.size() == 3 * 9 + 6 + 2);
  for (const auto& r : results) {
    std::printf("%s\n", r.report().c_str());
    INFO(r.report());
    CHECK(r.mismatches == 0);
    CHECK(r.nonzero > 0);
  }
}
