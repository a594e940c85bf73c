// gpu::quantize_transpose against sim/: the row-major codes, the statistics and scale_inv equal
// sim::scaling::quantize_per_tensor (satfinite) or sim::quantize (other modes), and the transposed
// codes are exactly those codes transposed (TE cast_transpose: same scale, same bytes).
#include <catch2/catch.hpp>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/quantize.hpp"
#include "sim/quantize.hpp"
#include "sim/scaling/current.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;
using sim::Overflow;

TEST_CASE("gpu::quantize_transpose equals sim, codes transposed exactly") {
  // Whole 64 x 64 tiles ({64, 64}, {128, 192}, {192, 128}, {320, 256}, {1024, 3072}) run the
  // tiled kernel, the others the general one; each on mixed values (mostly per-element fallback)
  // and on activations (mostly the fast path). {1024, 3072} has more tiles than an H200 holds
  // blocks at once (768 against about 660): blocks loop.
  const std::pair<std::int64_t, std::int64_t> shapes[] = {
      {1, 1},     {7, 33},  {32, 32},   {33, 65},   {100, 3},   {513, 257},
      {64, 1000}, {64, 64}, {128, 192}, {192, 128}, {320, 256}, {1024, 3072}};
  for (const auto& [rows, cols] : shapes) {
    for (const bool activations : {false, true}) {
      const std::size_t n = static_cast<std::size_t>(rows * cols);
      const std::uint64_t seed = testing::seed_from("transpose") + n;
      const std::vector<float> x = activations ? testing::activation_tensor(n, seed, 2.0f)
                                               : testing::mixed_tensor(n, seed);
      for (const Format format : {Format::E4M3, Format::E5M2}) {
        for (const Overflow mode :
             {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf}) {
          const float scale = 0.75f;
          std::vector<std::uint8_t> expected(n);
          sim::QuantizeStats es;
          float expected_scale_inv = 1.0f / scale;
          if (mode == Overflow::kSatFinite) {
            const auto r = sim::scaling::quantize_per_tensor("test", x, rows, cols, format, scale);
            expected = r.tensor.data;
            es = r.stats;
            expected_scale_inv = r.tensor.scale_inv[0];
          } else {
            es = sim::quantize(x, scale, format, mode, expected);
          }
          gpu::DeviceBuffer<float> dx(x), dscale(std::vector<float>{scale}), dscale_inv(1);
          gpu::DeviceBuffer<std::uint8_t> dout(n), dout_t(n);
          gpu::DeviceBuffer<gpu::DeviceQuantizeStats> dstats(1);
          dstats.zero();
          gpu::QuantizeOutputs out;
          out.codes = dout.get();
          out.stats = dstats.get();
          out.scale_inv = dscale_inv.get();
          gpu::quantize_transpose(dx.get(), rows, cols, dscale.get(), format, mode, out,
                                  dout_t.get());
          const std::vector<std::uint8_t> actual = dout.download(), actual_t = dout_t.download();
          testing::MismatchLog log;
          for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t c = 0; c < cols; ++c) {
              const std::size_t i = static_cast<std::size_t>(r * cols + c);
              const std::size_t it = static_cast<std::size_t>(c * rows + r);
              if (actual[i] != expected[i])
                log.add(testing::code_mismatch("codes", i, x[i], expected[i], actual[i], format));
              if (actual_t[it] != expected[i])
                log.add(
                    testing::code_mismatch("codes_t", it, x[i], expected[i], actual_t[it], format));
            }
          }
          const gpu::DeviceQuantizeStats as = gpu::read_stats(dstats.get());
          const float scale_inv = dscale_inv.download()[0];
          INFO(rows << "x" << cols << (activations ? " activations " : " mixed ")
                    << sim::spec(format).name << " " << sim::to_string(mode) << ": " << log.report()
                    << "\namax sim " << testing::float_text(es.amax) << " gpu "
                    << testing::float_text(as.amax) << "; scale_inv sim "
                    << testing::float_text(expected_scale_inv) << " gpu "
                    << testing::float_text(scale_inv));
          CHECK(log.count == 0);
          CHECK(testing::same_bits(es.amax, as.amax));
          CHECK(es.count == as.count);
          CHECK(es.saturated == as.saturated);
          CHECK(es.underflowed == as.underflowed);
          CHECK(es.nan == as.nan);
          CHECK(testing::same_bits(expected_scale_inv, scale_inv));
        }
      }
    }
  }
}
