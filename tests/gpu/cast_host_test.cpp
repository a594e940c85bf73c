// The device casts of gpu/cast.cuh, compiled for the host (gpu::host_twin), against sim/'s scalar
// casts. Runs without a GPU (label fast): it checks the kernels' logic (overflow fix-ups, NaN,
// stochastic rounding, decode) everywhere CI runs; gpu_cast_test repeats it on the device for
// all 2^32 inputs. Here: every 2^32 / 97 th pattern plus all patterns near the traps.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "gpu/cast_api.hpp"
#include "sim/cast.hpp"
#include "sim/rng.hpp"
#include "tests/gpu/check_results.hpp"
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

// Over patterns(), for each FP8 format and overflow mode: sim's code against the host twin's, each
// a function of (x, its bits, format, mode); `what` names the cast in a mismatch.
template <typename SimCode, typename TwinCode>
void check_twin_codes(const char* what, SimCode sim_code, TwinCode twin_code) {
  const std::vector<std::uint32_t> bits = patterns();
  testing::check_every_format_and_mode(
      bits.size(), "over " + std::to_string(bits.size()) + " patterns",
      [&](testing::MismatchLog& log, std::uint64_t i, Format format, Overflow mode) {
        const float y = std::bit_cast<float>(bits[i]);
        const std::uint8_t expected = sim_code(y, bits[i], format, mode);
        const std::uint8_t actual = twin_code(y, bits[i], format, mode);
        if (expected != actual)
          log.add(testing::code_mismatch(what, i, y, expected, actual, format));
      });
}

// The random word the stochastic casts get for a pattern: the FP8 stream (seed 5, stream 0) at its
// bits, as gpu::cast_range draws it.
std::uint32_t random_word(std::uint32_t bits) { return sim::philox_block_word(5, 0, bits); }

}  // namespace

TEST_CASE("host twin of the device RNE casts equals sim::cast_fp32_to_fp8") {
  check_twin_codes(
      "rn",
      [](float y, std::uint32_t, Format f, Overflow m) { return sim::cast_fp32_to_fp8(y, f, m); },
      [](float y, std::uint32_t, Format f, Overflow m) {
        return gpu::host_twin::cast_rn(y, f, m);
      });
}

TEST_CASE("host twin of the device stochastic casts equals sim::cast_fp32_to_fp8_stochastic") {
  check_twin_codes(
      "stochastic",
      [](float y, std::uint32_t bits, Format f, Overflow m) {
        return sim::cast_fp32_to_fp8_stochastic(y, f, m, random_word(bits));
      },
      [](float y, std::uint32_t bits, Format f, Overflow m) {
        return gpu::host_twin::cast_stochastic(y, f, m, random_word(bits));
      });
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
