// `seeds: auto` with `seed_budget:` end to end (issue 41 item 5; experiments/stats/seed_plan.hpp):
// the real `fp8lab sweep` on mlp for a few steps runs the pilot (seeds 0, 1, 2), prints each row's
// plan, runs the planned seeds with a baseline and a null run per seed, reports "seeds
// planned/run", and a resumed sweep plans the same and runs nothing. And its refusals: exit 2
// naming the file and the key.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;

// A band far below any FP8 error of a few mlp steps: every pilot's spread asks for more seeds
// than the budget of 5, so the plan is capped and seeds 3 and 4 run.
const char* const kSweep =
    "method: grid\nworkloads: [mlp]\nseeds: auto\nseed_budget: 5\nnull_runs: true\n"
    "practical_band: 0.000001\nparameters:\n  fp8_format: {values: [E5M2]}\n";

// The seeds of the records of `kind` (fp8, baseline, null).
std::set<std::int64_t> seeds_of(const std::map<std::string, nlohmann::json>& records,
                                const std::string& kind) {
  std::set<std::int64_t> seeds;
  for (const auto& [id, record] : records) {
    if (record["kind"] == kind) seeds.insert(record["seed"].get<std::int64_t>());
  }
  return seeds;
}

}  // namespace

TEST_CASE("seeds: auto runs the pilot, prints the plan, runs the planned seeds; resume keeps it",
          "[runner][seeds]") {
  const testing::Scratch dir("seeds-auto");
  REQUIRE(testing::sweep_yaml(FP8LAB_EXECUTABLE, dir, kSweep, {"--steps", "8"}) == 0);
  const auto log = read_text(dir / "sweep.log");
  INFO(log);
  // The plan of the one row, from its pilot: capped at the budget.
  CHECK(testing::count_of(log, "fp8lab sweep: seeds: auto: fp8_format=E5M2 on mlp: ") == 1u);
  CHECK_THAT(log, Catch::Contains("seeds for 80% power at the pilot's sd") &&
                      Catch::Contains("; runs 5 (seed_budget 5)"));
  const auto records = testing::records(dir / "out");
  CHECK(seeds_of(records, "fp8") == std::set<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(seeds_of(records, "baseline") == std::set<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(seeds_of(records, "null") == std::set<std::int64_t>{0, 1, 2, 3, 4});
  const auto sweep = testing::read_json(dir / "out" / "sweep.json");
  CHECK(sweep["seed_planning"] == nlohmann::json({{"budget", 5}, {"pilot_seeds", {0, 1, 2}}}));
  // The report's table: planned (above the budget) / run (5), and Stein's two-stage test.
  const auto md = read_text(dir / "out" / "report.md");
  CHECK_THAT(md, Catch::Contains("seeds planned/run") && Catch::Contains("/5 |"));
  CHECK_THAT(md, Catch::Contains("Stein's two-stage test"));

  // Resumed: the same plan from the same pilot records, nothing run, every record as it was.
  const auto resume =
      testing::run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out",
                           (dir / "out").string(), "--steps", "8", "--resume"},
                          dir / "resume.log");
  CHECK(resume == 0);
  const auto resumed_log = read_text(dir / "resume.log");
  INFO(resumed_log);
  const auto plan_line = [](const std::string& text) {
    const auto at = text.find("fp8lab sweep: seeds: auto: ");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  CHECK_FALSE(plan_line(log).empty());
  CHECK(plan_line(resumed_log) == plan_line(log));
  CHECK_THAT(resumed_log, Catch::Contains("0 processes run now"));
  CHECK(testing::records(dir / "out") == records);
}

TEST_CASE("seeds: auto refusals: exit 2 naming the file and the key", "[runner][seeds]") {
  const testing::Scratch dir("seeds-auto-refused");
  const std::map<std::string, std::string> cases = {
      {"workloads: [mlp]\nseeds: auto\n", "sweep.yaml:2: seed_budget: is required by seeds: auto"},
      {"workloads: [mlp]\nseeds: auto\nseed_budget: 2\n",
       "sweep.yaml:3: seed_budget: out of range: '2'"},
      {"workloads: [mlp]\nseeds: [0]\nseed_budget: 8\n",
       "sweep.yaml:3: seed_budget: applies to seeds: auto only"}};
  for (const auto& [yaml, message] : cases) {
    INFO(yaml);
    CHECK(testing::sweep_yaml(FP8LAB_EXECUTABLE, dir, yaml, {"--steps", "2"}) == 2);
    const auto log = read_text(dir / "sweep.log");
    CHECK_THAT(log, Catch::Contains(message));
    CHECK_FALSE(fs::exists(dir / "out" / "sweep.json"));
  }
  // --shard splits a row's pilot: refused before anything runs.
  CHECK(testing::sweep_yaml(FP8LAB_EXECUTABLE, dir,
                            "workloads: [mlp]\nseeds: auto\nseed_budget: 4\n",
                            {"--steps", "2", "--shard", "0/2"}) == 2);
  CHECK_THAT(read_text(dir / "sweep.log"), Catch::Contains("seeds: auto plans each row from its "
                                                           "whole pilot"));
  CHECK_FALSE(fs::exists(dir / "out" / "sweep.json"));
}

}  // namespace fp8lab::experiments
