// The block-scaled quantizers' per-block code (gpu::scaling::host_twin: the kernels' scale rules,
// casts and statistics) against sim::scaling, on the host: the same cases as gpu_scaling_test
// (experiments/gpu_check/scaling_checks.cpp), no GPU needed (label fast).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/scaling/blocked.hpp"
#include "sim/scaling/mx.hpp"
#include "tests/gpu/check_results.hpp"
#include "tests/sim/mx_cases.hpp"

TEST_CASE("host twin of the gpu scaling quantizers equals sim::scaling") {
  fp8lab::testing::check_every_result(
      fp8lab::experiments::gpu_check::check_scaling_quantizers(true));
}

// The torchao versions of the MX modes (gpu/scaling/rules.cuh mx_scale_code, mx_block_multiplier)
// on blocks aimed at every difference between torchao-0.18 and torchao-main (NaN, Inf, tiny
// blocks, d just above a power of two, amax near FLT_MAX), both copies and 2-D, both formats:
// every code, E8M0 byte, multiplier and dequantization factor equals sim::scaling::quantize_mx.
TEST_CASE("host twin MX rules equal sim for torchao-0.18 and torchao-main on adversarial blocks") {
  namespace ss = fp8lab::sim::scaling;
  namespace gs = fp8lab::gpu::scaling;
  using fp8lab::sim::Format;
  constexpr std::int64_t kRows = 256;  // 8 x 32 for the columnwise and 2-D layouts
  std::uint64_t compared = 0;
  for (const Format f : {Format::E4M3, Format::E5M2}) {
    const std::vector<float> x = fp8lab::test::mx::adversarial_blocks(kRows, f, 77);
    for (const ss::E8M0Mode mode :
         {ss::E8M0Mode::kFloor, ss::E8M0Mode::kCeil, ss::E8M0Mode::kEven, ss::E8M0Mode::kRceil}) {
      for (const ss::TorchaoVersion v : {ss::TorchaoVersion::kV0_18, ss::TorchaoVersion::kMain}) {
        for (const int shape : {0, 1, 2}) {  // 1x32, 32x1, 32x32
          const ss::QuantizeResult want =
              shape == 2 ? ss::quantize_mx_2d(x, kRows, 32, f, mode, v)
                         : ss::quantize_mx(x, kRows, 32,
                                           shape == 0 ? ss::ScaleAxis::kRowwise
                                                      : ss::ScaleAxis::kColumnwise,
                                           f, mode, v);
          const fp8lab::sim::QuantizedTensor& t = want.tensor;
          std::vector<std::uint8_t> codes(x.size()), e8m0(t.scale_e8m0.size());
          std::vector<float> scale_inv(t.scale_inv.size()), scale(t.scale.size());
          gs::host_twin::quantize_mx(
              x.data(), kRows, 32, t.block_rows, t.block_cols, f, mode, v,
              {codes.data(), scale_inv.data(), scale.data(), e8m0.data(), nullptr});
          INFO(fp8lab::sim::spec(f).name << " " << ss::to_string(mode) << " " << ss::to_string(v)
                                         << " shape " << shape);
          CHECK(codes == t.data);
          CHECK(e8m0 == t.scale_e8m0);
          for (std::size_t b = 0; b < scale.size(); ++b) {
            const bool same_scale = std::isnan(scale[b]) ? std::isnan(t.scale[b])
                                                         : fp8lab::test::mx::bits(scale[b]) ==
                                                               fp8lab::test::mx::bits(t.scale[b]);
            const bool same_inv = std::isnan(scale_inv[b])
                                      ? std::isnan(t.scale_inv[b])
                                      : fp8lab::test::mx::bits(scale_inv[b]) ==
                                            fp8lab::test::mx::bits(t.scale_inv[b]);
            if (!same_scale || !same_inv)
              FAIL_CHECK("block " << b << ": scale or scale_inv differs");
          }
          compared += codes.size();
        }
      }
    }
  }
  CHECK(compared == 2u * 4 * 2 * 3 * kRows * 32);
}
