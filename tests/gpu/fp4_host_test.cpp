// The FP4/FP6 quantizers' and the RHT's per-block code (gpu/scaling/fp4_rules.cuh, compiled for
// the host: gpu::scaling::host_twin) against sim/, without a GPU (label fast): the sub-byte cast on
// strided and adversarial fp32 patterns in every format and NaN mode, then the cases that
// gpu_fp4_test runs on the device (experiments/gpu_check/fp4_checks.cpp).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/scaling/fp4.hpp"
#include "gpu/scaling/fp4_stochastic.hpp"
#include "sim/cast.hpp"
#include "sim/fp4_stochastic.hpp"
#include "tests/gpu/check_results.hpp"
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

// torchao's MX cast maps a NaN by its bits, so the kernels' x * multiplier must give the NaN that
// sim's multiply gives on x86 (an H200's own multiply gives 0x7FFFFFFF: docs/device-log.md).
TEST_CASE("mul_nan_as_x86 gives the host's own product bits for NaN operands and Inf x 0") {
  std::vector<std::uint32_t> nans;
  for (const std::uint32_t sign : {0u, 0x8000'0000u}) {
    for (const std::uint32_t payload :
         {0x1u, 0x2A'AAAAu, 0x3F'FFFFu, 0x40'0000u, 0x40'0001u, 0x55'5555u, 0x7F'FFFFu}) {
      nans.push_back(sign | 0x7F80'0000u | payload);  // signalling (bit 22 clear) and quiet
    }
  }
  const float others[] = {0.0f, -0.0f, 1.0f, -3.5f, 1e-40f, 3e38f, INFINITY, -INFINITY};
  std::uint64_t checked = 0;
  const auto check = [&checked](float x, float m) {
    volatile float vx = x, vm = m;  // the host's multiply, as sim's `v * scale` compiles
    const float host = vx * vm;
    const float twin = gpu::scaling::host_twin::mul_nan_as_x86(x, m);
    INFO("x 0x" << std::hex << std::bit_cast<std::uint32_t>(x) << " m 0x"
                << std::bit_cast<std::uint32_t>(m) << ": host 0x"
                << std::bit_cast<std::uint32_t>(host) << ", twin 0x"
                << std::bit_cast<std::uint32_t>(twin));
    CHECK(std::bit_cast<std::uint32_t>(host) == std::bit_cast<std::uint32_t>(twin));
    ++checked;
  };
  for (const std::uint32_t n : nans) {
    for (const float o : others) {
      check(std::bit_cast<float>(n), o);
      check(o, std::bit_cast<float>(n));
    }
  }
  CHECK(checked == 2 * nans.size() * std::size(others));
  // A NaN made from no NaN operand: Inf x 0 in either order and sign (x86's default NaN).
  for (const float inf : {INFINITY, -INFINITY}) {
    for (const float zero : {0.0f, -0.0f}) {
      check(inf, zero);
      check(zero, inf);
    }
  }
  CHECK(checked == 2 * nans.size() * std::size(others) + 8);
}

// The per-element rule of the NVFP4 stochastic rounding kernel under every random byte: fp32
// patterns over all 2^32 (strided) and around the adversarial values, and a dense walk of |x| <= 7
// (every rounding step, the 6 cap), both signs.
TEST_CASE("host twin of E2M1 stochastic rounding equals sim::e2m1_stochastic_code, every byte") {
  std::vector<std::uint32_t> bits = testing::stride_and_adversarial_patterns((1u << 20) + 7, 16);
  for (std::uint32_t b = 0; b <= 0x40E0'0000u; b += 65537) {  // 0x40E00000: 7.0f
    bits.push_back(b);
    bits.push_back(b | 0x8000'0000u);
  }
  std::uint64_t compared = 0, mismatches = 0;
  for (const std::uint32_t b : bits) {
    const float x = std::bit_cast<float>(b);
    for (int byte = 0; byte < 256; ++byte) {
      const auto r = static_cast<std::uint8_t>(byte);
      const std::uint8_t want = sim::e2m1_stochastic_code(x, r);
      const std::uint8_t got = gpu::scaling::host_twin::e2m1_stochastic_code(x, r);
      ++compared;
      if (want != got && mismatches++ < 5) {
        std::printf("x bits 0x%08X (%g), byte %d: sim 0x%X, twin 0x%X\n", b, x, byte, want, got);
      }
    }
  }
  std::printf("e2m1 stochastic host twin: %llu (x, byte) pairs, %llu mismatches\n",
              static_cast<unsigned long long>(compared),
              static_cast<unsigned long long>(mismatches));
  CHECK(mismatches == 0);
  CHECK(compared == 256 * bits.size());
  CHECK(compared > 4'000'000);
}

TEST_CASE("host twins of the FP4/FP6 quantizers and the RHT equal sim") {
  const auto results = experiments::gpu_check::check_fp4_kernels(true);
  CHECK(results.size() == 3 * 9 + 6 + 3 + 2);
  fp8lab::testing::check_every_result(results);
}
