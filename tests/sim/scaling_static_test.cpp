// Static scaling (QuantizeKind::kStatic, sim/scaling/plan.hpp): the plan's fixed multiplier, no
// amax measured. Each element is the cast of RN(x * static_scale) (sim/cast.hpp, satfinite);
// the statistics count what that fixed scale saturates and what it flushes to zero, which is the
// whole of what static scaling can go wrong with.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/plan.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;

namespace {

QuantizePlan static_plan(Format format, float scale) {
  QuantizePlan p;
  p.kind = QuantizeKind::kStatic;
  p.format = format;
  p.static_scale = scale;
  return p;
}

}  // namespace

TEST_CASE("static: every code is cast_satfinite(RN(x * s)), scale_inv = 1 / s, no amax chosen") {
  const float scale = GENERATE(1.0f, 0.0625f, 16.0f);
  const Format format = GENERATE(Format::E4M3, Format::E5M2);
  INFO("scale " << scale << ", " << spec(format).name);
  // Values across the range: in range, above max finite at this scale, below the smallest
  // subnormal at this scale, zero and negative.
  const std::vector<float> x = {0.0f,  1.0f,  -3.5f, 100.0f, 500.0f, 1e5f,
                                -7e4f, 1e-3f, 1e-6f, 1e-9f,  -2e-8f, 0.3f};
  const QuantizeResult r = quantize(static_plan(format, scale), x, 3, 4, 2);
  REQUIRE(r.tensor.data.size() == x.size());
  REQUIRE(r.tensor.scale.size() == 1);
  CHECK(r.tensor.scale[0] == scale);
  CHECK(r.tensor.scale_inv[0] == 1.0f / scale);
  std::uint64_t saturated = 0, underflowed = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float y = x[i] * scale;
    INFO("x = " << x[i]);
    CHECK(r.tensor.data[i] == cast_fp32_to_fp8(y, format, Overflow::kSatFinite));
    // Saturated: RN(y) is above max finite (without saturation the cast gives Inf or NaN);
    // underflowed: a nonzero x whose code decodes to 0.
    const std::uint8_t code = r.tensor.data[i];
    if (!std::isfinite(decode_fp8(cast_fp32_to_fp8(y, format, Overflow::kNoSat), format))) {
      ++saturated;
    }
    if (x[i] != 0.0f && decode_fp8(code, format) == 0.0f) ++underflowed;
  }
  CHECK(r.stats.saturated == saturated);
  CHECK(r.stats.underflowed == underflowed);
  CHECK(r.stats.count == x.size());
  CHECK(r.stats.amax == 1e5f);  // measured for the statistics, never used for the scale
}

TEST_CASE("static: the counts follow the fixed scale, which a measured scale would avoid") {
  // At scale 1, E4M3 saturates 1e5 and -7e4 and 500, and flushes 1e-9 and -2e-8 (its smallest
  // subnormal is 2^-9); a scale of 2^-8 moves every value into range but flushes more small ones.
  const std::vector<float> x = {1e5f, -7e4f, 500.0f, 1.0f, 1e-9f, -2e-8f, 0.01f, 0.0f};
  const QuantizeResult one = quantize(static_plan(Format::E4M3, 1.0f), x, 2, 4);
  CHECK(one.stats.saturated == 3);
  CHECK(one.stats.underflowed == 2);
  const QuantizeResult small = quantize(static_plan(Format::E4M3, 0.00390625f), x, 2, 4);
  CHECK(small.stats.saturated == 0);
  CHECK(small.stats.underflowed == 3);  // 0.01 * 2^-8 < 2^-10 joins them
  // E5M2 at scale 1 holds 500 and 7e4 would exceed 57344: only 1e5 and -7e4 saturate.
  const QuantizeResult e5m2 = quantize(static_plan(Format::E5M2, 1.0f), x, 2, 4);
  CHECK(e5m2.stats.saturated == 2);
}

TEST_CASE("static: the same bits on every thread count") {
  std::vector<float> x(3 * 40000);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>((static_cast<double>(i % 977) - 488.0) * 1.37);
  }
  const QuantizePlan p = static_plan(Format::E4M3, 1.0f);  // |x| up to 669: some saturate
  const QuantizeResult one = quantize(p, x, 3, 40000, 1);
  const QuantizeResult four = quantize(p, x, 3, 40000, 4);
  CHECK(one.tensor.data == four.tensor.data);
  CHECK(one.stats.saturated == four.stats.saturated);
  CHECK(one.stats.underflowed == four.stats.underflowed);
  CHECK(one.stats.saturated > 0);
}
