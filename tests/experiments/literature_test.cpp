// The direction of each GEMM-level literature effect (docs/literature.md), not the papers'
// figures: L1, Hopper's e8m13 accumulation without promotion loses accuracy as K grows and
// promotion every 128 elements recovers it; L2, floor and even E8M0 scales clip block maxima,
// ceil and rceil never do, and torchao issue 2035's vector.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "experiments/literature/gemm_accumulation.hpp"
#include "experiments/literature/scale_rounding.hpp"

namespace fp8lab::experiments::literature {
namespace {

const AccumulationRow& find(const std::vector<AccumulationRow>& rows, Distribution d,
                            std::int64_t k, const std::string& model) {
  for (const auto& r : rows) {
    if (r.distribution == d && r.k == k && r.model == model) return r;
  }
  FAIL("no row " << to_string(d) << " K=" << k << " " << model);
  return rows.front();
}

}  // namespace

TEST_CASE("L1: no promotion loses accuracy as K grows; promotion every 128 recovers it",
          "[literature]") {
  AccumulationOptions options;
  options.ks = {512, 4096};
  options.rows = 16;
  options.threads = 2;
  const auto rows = measure_accumulation(options);
  REQUIRE(rows.size() == 3 * 2 * 3);
  for (const auto d : all_distributions()) {
    INFO(to_string(d));
    const auto& fast = find(rows, d, 4096, "hopper_fast");
    const auto& split = find(rows, d, 4096, "hopper_split");
    const auto& fast_short = find(rows, d, 512, "hopper_fast");
    // Every model's error against the exact sum of the same FP8 products is its accumulation's.
    CHECK(fast.frob_vs_exact > split.frob_vs_exact);
    CHECK(fast.frob_vs_exact > fast_short.frob_vs_exact);
    CHECK(fast.max_rel_vs_exact >= split.max_rel_vs_exact);
    // Against the unquantized fp64 product, E4M3's own rounding adds to the promoted sum's.
    CHECK(split.frob_vs_fp64 > split.frob_vs_exact);
  }
}

TEST_CASE("L1's metrics: max relative error skips outputs near zero", "[literature]") {
  const std::vector<double> reference = {10.0, -10.0, 0.001, 10.0};
  const std::vector<float> c = {10.1f, -10.0f, 0.002f, 10.0f};
  const auto m = error_metrics(c, reference);
  CHECK(m.max_rel == Approx(0.01).epsilon(1e-5));  // 0.002 vs 0.001 is near zero: skipped
  CHECK(m.frob == Approx(std::sqrt((0.01 + 1e-6) / 300.000001)).epsilon(1e-4));
}

TEST_CASE("L2: floor and even scales clip block maxima, ceil and rceil never do",
          "[literature]") {
  ScaleRoundingOptions options;
  options.rows = 32;
  options.k = 1024;
  const auto rows = measure_scale_rounding(options);
  REQUIRE(rows.size() == 3 * 4);
  std::int64_t floor_clipped = 0, even_clipped = 0;
  for (const auto& r : rows) {
    INFO(to_string(r.distribution) << " " << r.mode);
    REQUIRE(r.blocks == 32 * 1024 / 32);
    if (r.mode == "floor") floor_clipped += r.clipped;
    if (r.mode == "even") even_clipped += r.clipped;
    if (r.mode == "rceil" || r.mode == "ceil") {
      CHECK(r.clipped == 0);
      // In range, the block maximum loses at most half an E4M3 step.
      CHECK(r.worst_loss <= kHalfStepE4M3);
    }
    if (r.mode == "floor" && r.clipped > 0) CHECK(r.worst_loss > kHalfStepE4M3);
  }
  CHECK(floor_clipped > 0);
  CHECK(even_clipped > 0);
}

TEST_CASE("torchao issue 2035: amax 150 gives RCEIL code 126 where OCP ceil gives 127",
          "[literature]") {
  CHECK(scale_code(150.0f, "rceil") == 126);
  CHECK(scale_code(150.0f, "ceil") == 127);
  // OCP floor: floor(log2 150) - 8 = -1, the same code as RCEIL here (the reference note's
  // "floor 127" is the OCP ceil).
  CHECK(scale_code(150.0f, "floor") == 126);
}

}  // namespace fp8lab::experiments::literature
