// The device casts (gpu/cast.cuh through gpu::cast_range) against sim/'s scalar casts on all 2^32
// fp32 inputs: E4M3 and E5M2, every overflow mode, RNE and stochastic (random word of pattern b =
// philox(seed, 0, b)). About 12 x 4 GiB of codes computed on the GPU in 1 GiB chunks and compared
// on all host cores; also decode of all 256 codes.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "gpu/cast_api.hpp"
#include "gpu/device_buffer.hpp"
#include "sim/cast.hpp"
#include "sim/rng.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;
using sim::Overflow;

namespace {

constexpr std::int64_t kChunk = std::int64_t{1} << 30;
constexpr std::uint64_t kSeed = 0x5EED'CA57ull;

void check_all(Format format, Overflow mode, bool stochastic) {
  gpu::DeviceBuffer<std::uint8_t> codes(kChunk);
  std::vector<std::uint8_t> host(kChunk);
  testing::MismatchLog log;
  for (std::int64_t first = 0; first < (std::int64_t{1} << 32); first += kChunk) {
    gpu::cast_range(static_cast<std::uint32_t>(first), kChunk, format, mode, stochastic, kSeed,
                    codes.get());
    FP8LAB_CUDA_CHECK(cudaMemcpy(host.data(), codes.get(), kChunk, cudaMemcpyDeviceToHost));
    testing::parallel_for_u64(0, kChunk, [&](std::uint64_t i) {
      const auto bits = static_cast<std::uint32_t>(first + static_cast<std::int64_t>(i));
      const float y = std::bit_cast<float>(bits);
      const std::uint8_t expected =
          stochastic ? sim::cast_fp32_to_fp8_stochastic(y, format, mode, sim::philox_random_word(kSeed, 0, bits))
                     : sim::cast_fp32_to_fp8(y, format, mode);
      if (expected != host[i]) log.add(testing::code_mismatch("cast", bits, y, expected, host[i], format));
    });
  }
  std::printf("all 2^32 inputs: %s %s %s: %llu mismatches\n", sim::spec(format).name,
              sim::to_string(mode), stochastic ? "stochastic" : "rne",
              static_cast<unsigned long long>(log.count.load()));
  INFO(sim::spec(format).name << " " << sim::to_string(mode) << (stochastic ? " stochastic" : " rne")
                              << ": " << log.report());
  CHECK(log.count == 0);
}

}  // namespace

TEST_CASE("device RNE casts equal sim on all 2^32 fp32 inputs") {
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf}) {
      check_all(format, mode, false);
    }
  }
}

TEST_CASE("device stochastic casts equal sim on all 2^32 fp32 inputs") {
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf}) {
      check_all(format, mode, true);
    }
  }
}

TEST_CASE("device decode equals sim::decode_fp8 on all 256 codes") {
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    gpu::DeviceBuffer<float> values(256);
    gpu::decode_all(format, values.get());
    const std::vector<float> actual = values.download();
    for (int code = 0; code < 256; ++code) {
      const float expected = sim::decode_fp8(static_cast<std::uint8_t>(code), format);
      INFO(sim::spec(format).name << " code " << code << ": sim " << testing::float_text(expected)
                                  << " gpu " << testing::float_text(actual[code]));
      CHECK((std::isnan(expected) ? std::isnan(actual[code]) : testing::same_bits(expected, actual[code])));
    }
  }
}
