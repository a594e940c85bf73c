// gpu::scaling quantizers (current, static, axiswise, block, MXFP8) against sim::scaling: every code,
// scale, scale_inv, E8M0 code and statistic. The cases are experiments/gpu_check/scaling_checks.cpp,
// the same ones `fp8lab check` runs; one more case here runs tensors larger than one grid pass.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/scaling/blocked.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/mx.hpp"
#include "tests/gpu/check_results.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;

TEST_CASE("gpu scaling quantizers equal sim::scaling") {
  fp8lab::testing::check_every_result(fp8lab::experiments::gpu_check::check_scaling_quantizers());
}

TEST_CASE("gpu 1x128, MXFP8 1x32 and current scaling on tensors larger than one grid pass") {
  // 1024 x 8192 values: the row-block kernels (gpu/scaling/blocked.cu) and the current-scaling
  // amax pass loop several steps per warp (an H200 holds about 2.7 million values per grid pass).
  const std::int64_t rows = 1024, cols = 8192;
  std::mt19937_64 rng(testing::seed_from("scaling large"));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (auto& v : x) v = std::ldexp(normal(rng), static_cast<int>(rng() % 12) - 6);
  for (int i = 0; i < 64; ++i) {  // a few specials: some lanes and blocks take the fallback
    const float pick[] = {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(), 0.0f, -0.0f, 1e-40f};
    x[rng() % x.size()] = pick[rng() % std::size(pick)];
  }
  namespace ss = sim::scaling;
  namespace gs = gpu::scaling;
  struct Case {
    const char* name;
    std::function<ss::QuantizeResult()> sim;
    std::function<void(const float*, const gs::BlockedOutputs&)> gpu;
  };
  const Case cases[] = {
      {"block te 1x128 pow2", [&] { return ss::quantize_block_te(x, rows, cols, Format::E4M3); },
       [&](const float* dx, const gs::BlockedOutputs& o) {
         gs::quantize_block_te(dx, rows, cols, 1, 128, Format::E4M3, true, 0.0f,
                               ss::block_value_for_inf(Format::FP32), o);
       }},
      {"mxfp8 1x32 te",
       [&] { return ss::quantize_mx(x, rows, cols, ss::ScaleAxis::kRowwise, Format::E4M3); },
       [&](const float* dx, const gs::BlockedOutputs& o) {
         gs::quantize_mx(dx, rows, cols, 1, 32, Format::E4M3, gs::E8M0Mode::kTe,
                         gs::TorchaoVersion::kV0_18, o);
       }},
      {"mxfp8 1x32 rceil torchao-0.18 e5m2",
       [&] {
         return ss::quantize_mx(x, rows, cols, ss::ScaleAxis::kRowwise, Format::E5M2,
                                ss::E8M0Mode::kRceil);
       },
       [&](const float* dx, const gs::BlockedOutputs& o) {
         gs::quantize_mx(dx, rows, cols, 1, 32, Format::E5M2, gs::E8M0Mode::kRceil,
                         gs::TorchaoVersion::kV0_18, o);
       }},
      {"current te", [&] { return ss::quantize_current_te(x, rows, cols, Format::E4M3); },
       [&](const float* dx, const gs::BlockedOutputs& o) {
         gs::quantize_current_te(dx, rows, cols, Format::E4M3, false, 0.0f, o);
       }},
  };
  for (const Case& c : cases) {
    const ss::QuantizeResult expected = c.sim();
    const sim::QuantizedTensor& t = expected.tensor;
    const std::size_t scales_n = t.scale_inv.size();
    gpu::DeviceBuffer<float> dx(x), dscale_inv(scales_n), dscale(scales_n);
    gpu::DeviceBuffer<std::uint8_t> dcodes(x.size()), de8m0(scales_n);
    gpu::DeviceBuffer<gpu::DeviceQuantizeStats> dstats(1);
    dstats.zero();
    c.gpu(dx.get(), {dcodes.get(), dscale_inv.get(), dscale.get(), de8m0.get(), dstats.get()});
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<std::uint8_t> codes = dcodes.download(), e8m0 = de8m0.download();
    const std::vector<float> scale_inv = dscale_inv.download();
    const gpu::DeviceQuantizeStats st = gpu::read_stats(dstats.get());
    testing::MismatchLog log;
    for (std::size_t i = 0; i < codes.size(); ++i) {
      if (codes[i] != t.data[i])
        log.add(testing::code_mismatch("code", i, x[i], t.data[i], codes[i], t.format));
    }
    for (std::size_t b = 0; b < scales_n; ++b) {
      if (!testing::same_bits(t.scale_inv[b], scale_inv[b])) {
        log.add(testing::float_mismatch("scale_inv", b, t.scale_inv[b], scale_inv[b]));
      }
      if (!t.scale_e8m0.empty() && t.scale_e8m0[b] != e8m0[b]) {
        log.add("e8m0[" + std::to_string(b) + "]: sim " + std::to_string(t.scale_e8m0[b]) +
                ", gpu " + std::to_string(e8m0[b]));
      }
    }
    INFO(c.name << " " << rows << "x" << cols << ": " << log.report() << "\nstats sim amax "
                << testing::float_text(expected.stats.amax) << " saturated "
                << expected.stats.saturated << " underflowed " << expected.stats.underflowed
                << " nan " << expected.stats.nan << "; gpu amax " << testing::float_text(st.amax)
                << " saturated " << st.saturated << " underflowed " << st.underflowed << " nan "
                << st.nan);
    CHECK(log.count == 0);
    CHECK(testing::same_bits(expected.stats.amax, st.amax));
    CHECK(expected.stats.count == st.count);
    CHECK(expected.stats.saturated == st.saturated);
    CHECK(expected.stats.underflowed == st.underflowed);
    CHECK(expected.stats.nan == st.nan);
  }
}
