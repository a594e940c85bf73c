// The device casts (gpu/cast.cuh through gpu::cast_range) against sim/'s scalar casts on all 2^32
// fp32 inputs: E4M3 and E5M2, RNE in every overflow mode and stochastic (random word of pattern
// b = philox_block_word(seed, 0, b)) with satfinite; 8 x 4 GiB of codes computed on the GPU in 1 GiB chunks
// and compared on all host cores (experiments/gpu_check/quantize_checks.cpp). The stochastic
// nosat / sat_keep_inf overflow paths are covered by gpu_quantize_test and gpu_cast_host_test.
// Also decode of all 256 codes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/cast_api.hpp"
#include "gpu/device_buffer.hpp"
#include "sim/cast.hpp"
#include "tests/gpu/describe.hpp"

using namespace fp8lab;

TEST_CASE("device RNE and stochastic casts equal sim on all 2^32 fp32 inputs") {
  for (const bool stochastic : {false, true}) {
    for (const auto& r : experiments::gpu_check::check_casts_all_inputs(stochastic, !stochastic)) {
      std::printf("%s\n", r.report().c_str());
      INFO(r.report());
      CHECK(r.mismatches == 0);
      CHECK(r.compared == (std::uint64_t{1} << 32));
    }
  }
}

TEST_CASE("device decode equals sim::decode_fp8 on all 256 codes") {
  for (const sim::Format format : {sim::Format::E4M3, sim::Format::E5M2}) {
    gpu::DeviceBuffer<float> values(256);
    gpu::decode_all(format, values.get());
    const std::vector<float> actual = values.download();
    for (int code = 0; code < 256; ++code) {
      const float expected = sim::decode_fp8(static_cast<std::uint8_t>(code), format);
      INFO(sim::spec(format).name << " code " << code << ": sim " << testing::float_text(expected)
                                  << " gpu " << testing::float_text(actual[code]));
      CHECK((std::isnan(expected) ? std::isnan(actual[code])
                                  : testing::same_bits(expected, actual[code])));
    }
  }
}
