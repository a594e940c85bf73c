// The device casts of gpu/cast.cuh, compiled for the host (gpu::host_twin), against sim/'s scalar
// casts. Runs without a GPU (label fast): it checks the kernels' logic (overflow fix-ups, NaN,
// stochastic rounding, decode) everywhere CI runs; gpu_cast_test repeats it on the device for
// all 2^32 inputs. Here: every 2^32 / 97 th pattern plus all patterns near the traps.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "gpu/cast_api.hpp"
#include "sim/cast.hpp"
#include "sim/rng.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;
using sim::Overflow;

namespace {

// Bit patterns to check: a stride through all 2^32, plus 4096 patterns around each adversarial
// value (both signs), which covers every tie and overflow boundary of both formats.
std::vector<std::uint32_t> patterns() { return testing::stride_and_adversarial_patterns(97, 2048); }

}  // namespace

TEST_CASE("host twin of the device RNE casts equals sim::cast_fp32_to_fp8") {
  const std::vector<std::uint32_t> bits = patterns();
  for (const Format format : sim::kFp8Formats) {
    for (const Overflow mode : sim::kOverflowModes) {
      testing::MismatchLog log;
      testing::parallel_for_u64(0, bits.size(), [&](std::uint64_t i) {
        const float y = std::bit_cast<float>(bits[i]);
        const std::uint8_t expected = sim::cast_fp32_to_fp8(y, format, mode);
        const std::uint8_t actual = gpu::host_twin::cast_rn(y, format, mode);
        if (expected != actual)
          log.add(testing::code_mismatch("rn", i, y, expected, actual, format));
      });
      INFO(sim::spec(format).name << " " << sim::to_string(mode) << " over " << bits.size()
                                  << " patterns: " << log.report());
      CHECK(log.count == 0);
    }
  }
}

TEST_CASE("host twin of the device stochastic casts equals sim::cast_fp32_to_fp8_stochastic") {
  const std::vector<std::uint32_t> bits = patterns();
  for (const Format format : sim::kFp8Formats) {
    for (const Overflow mode : sim::kOverflowModes) {
      testing::MismatchLog log;
      testing::parallel_for_u64(0, bits.size(), [&](std::uint64_t i) {
        const float y = std::bit_cast<float>(bits[i]);
        const std::uint32_t random = sim::philox_random_word(5, 0, bits[i]);
        const std::uint8_t expected = sim::cast_fp32_to_fp8_stochastic(y, format, mode, random);
        const std::uint8_t actual = gpu::host_twin::cast_stochastic(y, format, mode, random);
        if (expected != actual)
          log.add(testing::code_mismatch("stochastic", i, y, expected, actual, format));
      });
      INFO(sim::spec(format).name << " " << sim::to_string(mode) << ": " << log.report());
      CHECK(log.count == 0);
    }
  }
}

TEST_CASE("host twin of the device decode equals sim::decode_fp8 on all 256 codes") {
  for (const Format format : sim::kFp8Formats) {
    for (int code = 0; code < 256; ++code) {
      const float expected = sim::decode_fp8(static_cast<std::uint8_t>(code), format);
      const float actual = gpu::host_twin::decode(static_cast<std::uint8_t>(code), format);
      INFO(sim::spec(format).name << " code " << code << ": sim " << testing::float_text(expected)
                                  << " twin " << testing::float_text(actual));
      // NaN codes: both NaN (payloads are not part of the contract); others bit for bit.
      CHECK((std::isnan(expected) ? std::isnan(actual) : testing::same_bits(expected, actual)));
    }
  }
}
