// The three facts issue 9 asks the report to show, checked on gpt-tiny (seconds per run):
//   1. accelerate's default recipe (delayed scaling, HYBRID, margin 0, history 1024, most_recent;
//      TE's own DelayedScaling default algorithm is max) ends
//      within 2% of the baseline's eval loss: label "within tolerance";
//   2. E5M2 forward is measurably worse than HYBRID: its forward quantization loses >= 3 dB of
//      SQNR (2 mantissa bits instead of 3: ~6 dB expected) and its weights drift further from the
//      baseline's;
//   3. a recipe made to fail (margin 40: every scaled value, weights and gradients included, falls
//      below the smallest subnormal) is reported as "failed to train", with its underflow.
// Also prints the benchmark note: emulated FP8 step time over the FP32 LibTorch step time of the
// same workload, measured in the same process.
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/render/write_reports.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/stats/analysis.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

recipes::Recipe accelerate_default() {
  return recipes::Recipe{};
}  // accelerate's TERecipeKwargs defaults

nlohmann::json run(const ResultsDirectory& directory, const recipes::Recipe& recipe) {
  RunRequest request;
  request.workload = "gpt-tiny";
  request.seed = 0;
  request.recipe = recipe;
  request.run_id = recipes::sweep_run_id(recipe, request.workload, request.seed);
  const auto record = to_json(execute_fp8_run(directory, request));
  INFO(record.dump().substr(0, 2000));
  REQUIRE(record["status"] == "finished");
  return record;
}

double final_number(const nlohmann::json& record, const char* field) {
  INFO(field << " in " << record["final"].dump());
  REQUIRE(record["final"][field].is_number());
  return record["final"][field].get<double>();
}

using testing::read_text;
using testing::typed;

}  // namespace

TEST_CASE("The report shows the three facts on gpt-tiny", "[runner][facts]") {
  use_one_torch_thread();
  const testing::Scratch dir("facts");
  const ResultsDirectory directory(dir);

  const auto hybrid = run(directory, accelerate_default());
  auto e5m2_recipe = accelerate_default();
  e5m2_recipe.fp8_format = recipes::Fp8Format::kE5M2;
  const auto e5m2 = run(directory, e5m2_recipe);
  auto failing_recipe = accelerate_default();
  failing_recipe.margin = 40;
  const auto failing = run(directory, failing_recipe);

  // 1. HYBRID tracks the baseline.
  const double hybrid_rel = final_number(hybrid, "eval_rel_diff");
  INFO("HYBRID final eval loss " << final_number(hybrid, "eval_loss") << " vs baseline "
                                 << final_number(hybrid, "baseline_eval_loss"));
  CHECK(std::fabs(hybrid_rel) <= 0.02);
  CHECK(run_verdict(typed(hybrid)) == "within tolerance");

  // 2. E5M2 forward is worse: lower forward SQNR, larger weight divergence.
  const double sqnr_hybrid = final_number(hybrid, "forward_sqnr_db");
  const double sqnr_e5m2 = final_number(e5m2, "forward_sqnr_db");
  INFO("forward SQNR HYBRID " << sqnr_hybrid << " dB, E5M2 " << sqnr_e5m2 << " dB");
  CHECK(sqnr_e5m2 <= sqnr_hybrid - 3.0);
  const double w_hybrid = final_number(hybrid, "weight_rel_l2");
  const double w_e5m2 = final_number(e5m2, "weight_rel_l2");
  INFO("weight rel L2 HYBRID " << w_hybrid << ", E5M2 " << w_e5m2);
  CHECK(w_e5m2 > w_hybrid);

  // 3. The huge margin fails, and says why: the weights underflow to zero, and so do the
  // gradients that still reach a Linear (those of the Linears behind a zeroed one are exact zeros,
  // which are not underflows).
  CHECK(run_verdict(typed(failing)) == "failed to train");
  CHECK(final_number(failing, "weight_underflow_fraction") > 0.9);
  CHECK(final_number(failing, "grad_output_underflow_fraction") > 0.0);
  CHECK(final_number(hybrid, "weight_underflow_fraction") < 0.01);

  const auto paths = write_reports(ReportOptions{{dir}, {}, {}});
  const auto md = read_text(paths.report_md);
  INFO(md);
  // One baseline seed: the unpaired noise floor is unmeasured, and one seed gives no paired
  // interval.
  CHECK_THAT(md, Catch::Contains("- gpt-tiny (context, not the verdict rule): noise floor "
                                 "unmeasured (1 finished baseline seed"));
  CHECK_THAT(md, Catch::Contains("| delayed HYBRID m0 h1024 most_recent | 0 | inconclusive (1 "
                                 "seed with a paired error; a test needs 3) |"));
  CHECK_THAT(md, Catch::Contains("[`" + hybrid["run_id"].get<std::string>() + "`](runs/" +
                                 hybrid["run_id"].get<std::string>() + ".json)"));
  // The problem runs' table (report_tables.hpp, problems_table): recipe, seed, record, verdict.
  CHECK_THAT(md,
             Catch::Contains("| delayed HYBRID m40 h1024 most_recent | 0 | [`" +
                             failing["run_id"].get<std::string>() + "`](runs/" +
                             failing["run_id"].get<std::string>() + ".json) | failed to train |"));
  CHECK_THAT(md, Catch::Contains("underflowed at the last logged step: input "));
  char sqnr_text[64];
  std::snprintf(sqnr_text, sizeof sqnr_text, "| %.1f |", sqnr_e5m2);
  CHECK_THAT(md, Catch::Contains(sqnr_text));
  const auto html = read_text(paths.report_html);
  CHECK_THAT(html, Catch::Contains("failed to train"));

  // The benchmark note (not asserted: speed is measured, never a test verdict).
  for (const auto* r : {&hybrid, &e5m2}) {
    std::printf("benchmark note: gpt-tiny %s: emulated FP8 step %.4f s, FP32 LibTorch step "
                "%.4f s, ratio %.2fx (same process, steps interleaved)\n",
                (*r)["recipe_label"].get<std::string>().c_str(),
                (*r)["throughput"]["probe_step_seconds"].get<double>(),
                (*r)["throughput"]["fp32_step_seconds"].get<double>(),
                (*r)["throughput"]["step_time_over_fp32"].get<double>());
  }
}

}  // namespace fp8lab::experiments
