// The sweep file's baseline_seeds key (its errors, the shipped default sweep, the dry run), a real
// tiny sweep that runs the baseline on three seeds and reports the measured noise floor, and the
// --heatmap-axes errors of `fp8lab sweep` and `fp8lab report` as a user sees them.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/child_process.hpp"
#include "recipes/error.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;

recipes::Sweep sweep_text(const std::string& line) {
  return recipes::parse_sweep_text("workloads: [w]\n" + line + "\n", "s.yaml");
}

}  // namespace

TEST_CASE("baseline_seeds: a non-empty list of distinct integers, else a clear error",
          "[report][seeds]") {
  CHECK(sweep_text("baseline_seeds: [0, 1, 2]").baseline_seeds ==
        std::vector<std::int64_t>{0, 1, 2});
  CHECK(sweep_text("seeds: [4]").baseline_seeds.empty());
  CHECK_THROWS_WITH(sweep_text("baseline_seeds: 3"),
                    "s.yaml:2: baseline_seeds: expected a non-empty list, got '3'; accepted: a "
                    "list of distinct integers, e.g. [0, 1, 2]");
  CHECK_THROWS_WITH(sweep_text("baseline_seeds: []"),
                    "s.yaml:2: baseline_seeds: expected a non-empty list, got '[]'; accepted: a "
                    "list of distinct integers, e.g. [0, 1, 2]");
  CHECK_THROWS_WITH(sweep_text("baseline_seeds: [1.5]"),
                    "s.yaml:2: baseline_seeds[0]: wrong type: expected an integer, got '1.5'; "
                    "accepted: integers");
  CHECK_THROWS_WITH(sweep_text("baseline_seeds: [0, one]"),
                    Catch::StartsWith("s.yaml:2: baseline_seeds[1]: ") &&
                        Catch::Contains("'one'") && Catch::Contains("accepted: integers"));
  CHECK_THROWS_WITH(sweep_text("baseline_seeds: [0, 1, 0]"),
                    "s.yaml:2: baseline_seeds[2]: is given twice: '0'; accepted: distinct "
                    "integers, e.g. [0, 1, 2]");
  CHECK_THROWS_WITH(sweep_text("baseline_seed: [0]"),
                    Catch::Contains("unknown sweep key") &&
                        Catch::Contains("did you mean 'baseline_seeds'?"));
}

TEST_CASE("The default sweep runs its baseline on three seeds; the dry run says so",
          "[report][seeds]") {
  const auto sweep =
      recipes::read_sweep(std::string(FP8LAB_SOURCE_DIR) + "/recipes/sweeps/default.yaml");
  CHECK(sweep.baseline_seeds == std::vector<std::int64_t>{0, 1, 2});
  CHECK(sweep.probes.seeds == std::vector<std::int64_t>{0});  // the probes on one trajectory
  CHECK_THAT(recipes::format_dry_run(recipes::expand(sweep)),
             Catch::Contains("baseline_seeds: 0, 1, 2: the baseline also runs on these seeds "
                             "for each workload (the report's seed-to-seed noise floor)"));
}

TEST_CASE("A sweep with baseline_seeds runs the baseline per seed and reports the noise floor",
          "[report][seeds]") {
  const testing::Scratch dir("seeds-sweep");
  REQUIRE(testing::mlp_format_sweep(FP8LAB_EXECUTABLE, dir, "HYBRID, E4M3",
                                    "seeds: [0]\nbaseline_seeds: [0, 1, 2]\n") == 0);
  const auto sweep = testing::read_json(dir / "out" / "sweep.json");
  CHECK(sweep["baseline_seeds"] == nlohmann::json({0, 1, 2}));
  for (int seed = 0; seed < 3; ++seed) {
    INFO("seed " << seed);
    CHECK(fs::exists(dir / "out" / "runs" /
                     ("baseline-mlp-seed" + std::to_string(seed) + "-fp32-steps4.json")));
  }
  const auto md = read_text(dir / "out" / "report.md");
  CHECK_THAT(md, Catch::Contains("- mlp (context, not the verdict rule): noise floor ") &&
                     Catch::Contains("over baseline seeds 0, 1, 2)"));
  CHECK(md.find("unmeasured") == std::string::npos);
}

TEST_CASE("null_runs: the sweep runs the null recipe on each seed; the report shows the chaos "
          "floor and paired verdicts over 3 seeds",
          "[report][seeds][paired]") {
  const testing::Scratch dir("null-sweep");
  REQUIRE(testing::mlp_format_sweep(FP8LAB_EXECUTABLE, dir, "HYBRID, E5M2",
                                    "seeds: [0, 1, 2]\nnull_runs: true\n"
                                    "practical_band: 0.01\n") == 0);
  const auto sweep = testing::read_json(dir / "out" / "sweep.json");
  CHECK(sweep["null_runs"] == true);
  CHECK(sweep["practical_band"] == 0.01);
  for (int seed = 0; seed < 3; ++seed) {
    INFO("seed " << seed);
    const auto path = dir / "out" / "runs" /
                      ("null-baseline-mlp-seed" + std::to_string(seed) + "-fp32-steps4.json");
    REQUIRE(fs::exists(path));
    const auto record = testing::read_json(path);
    CHECK(record["kind"] == "null");
    CHECK(record["status"] == "finished");
    CHECK(record["perturbation"] == "initial weights rounded once to bf16");
    // A perturbation, so the run leaves its baseline's trajectory.
    CHECK(record["final"]["eval_rel_diff"].get<double>() != 0.0);
  }
  const auto md = read_text(dir / "out" / "report.md");
  CHECK_THAT(md, Catch::Contains("- mlp: chaos floor, once null arm (paired tail error) "));
  CHECK_THAT(md, Catch::Contains("(n=3), sd "));
  CHECK_THAT(md, Catch::Contains("at alpha 0.05 and band b = 1%"));
  CHECK_THAT(md, Catch::Contains("| fp8_format | "));  // HYBRID vs E5M2 on the same seeds
}

TEST_CASE("fp8lab sweep and fp8lab report name the bad --heatmap-axes value and the accepted "
          "fields",
          "[report][heatmap]") {
  const testing::Scratch dir("axes-cli");
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [mlp]\nparameters:\n"
                                       "  fp8_format: {values: [HYBRID, E4M3]}\n"
                                       "  margin: {values: [0, 4]}\n  interval: {value: 1}\n";
  // Checked before any run: a dry run fails the same way, and nothing is written.
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--dry-run",
                      "--heatmap-axes", "fp8_format,marign"},
                     dir / "sweep.log") == 2);
  CHECK_THAT(
      read_text(dir / "sweep.log"),
      Catch::Contains("fp8lab sweep: --heatmap-axes 'fp8_format,marign': 'marign' is not a "
                      "recipe field (did you mean 'margin'?); accepted: two different recipe "
                      "fields these runs vary: fp8_format, margin"));
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out",
                      (dir / "out").string(), "--heatmap-axes", "interval,margin"},
                     dir / "sweep2.log") == 2);
  CHECK_THAT(read_text(dir / "sweep2.log"),
             Catch::Contains("'interval' is a recipe field these runs do not vary (one value)"));
  CHECK_FALSE(fs::exists(dir / "out"));

  ResultsDirectory store(dir / "results");
  store.write_run_record(testing::baseline_record());
  store.write_run_record(testing::fp8_record("a", "HYBRID", 0, 2.01));
  store.write_run_record(testing::fp8_record("b", "E5M2", 4, 2.2));
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "report", (dir / "results").string(), "--heatmap-axes",
                      "fp8_format,scaling"},
                     dir / "report.log") == 2);
  CHECK_THAT(read_text(dir / "report.log"),
             Catch::Contains("fp8lab report: --heatmap-axes 'fp8_format,scaling': 'scaling' is a "
                             "recipe field these runs do not vary (one value); accepted: two "
                             "different recipe fields these runs vary: fp8_format, margin"));
}

TEST_CASE(
    "sweep --shard with --heatmap-axes the shard does not vary finishes with the default axes "
    "and a note",
    "[report][heatmap]") {
  const testing::Scratch dir("axes-shard");
  // Shard 0/2 takes runs 1 and 3: HYBRID and E4M3 at margin 0 (margin does not vary there).
  REQUIRE(testing::sweep_yaml(
              FP8LAB_EXECUTABLE, dir,
              "method: grid\nworkloads: [mlp]\nparameters:\n"
              "  fp8_format: {values: [HYBRID, E4M3]}\n"
              "  margin: {values: [0, 4]}\n",
              {"--steps", "2", "--shard", "0/2", "--heatmap-axes", "fp8_format,margin"}) == 0);
  CHECK_THAT(read_text(dir / "out" / "report.md"),
             Catch::Contains("'margin' is a recipe field these runs do not vary (one value)") &&
                 Catch::Contains("The heatmap here uses the default axes"));
  // `fp8lab report` on that directory alone still refuses the axes.
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "report", (dir / "out").string(), "--heatmap-axes",
                      "fp8_format,margin"},
                     dir / "report.log") == 2);
  CHECK_THAT(read_text(dir / "report.log"),
             Catch::Contains("fp8lab report: --heatmap-axes 'fp8_format,margin': 'margin' is a "
                             "recipe field these runs do not vary"));
}

}  // namespace fp8lab::experiments
