// The probes through the fp8lab command (issue 41): a baseline's record and trajectory archive are
// the same with and without probes, its sidecar holds the rows, an FP8 run with --probe-every
// writes its exact-on-run rows, a sweep's `probes:` reaches both; bad probe keys and flags exit 2
// naming the key before anything trains.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/results/probe_sidecar.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;

constexpr const char* kWorkload = "mlp:steps=5,eval_every=5,eval_batches=1";
// A command's exit status 0, or its log with the failure.
void require_ok(int code, const fs::path& log) {
  INFO(read_text(log));
  REQUIRE(code == 0);
}

void run_ok(const std::vector<std::string>& argv, const fs::path& log) {
  require_ok(run_to_end(argv, log), log);
}

// Sweeps kWorkload under current scaling with the sweep keys `keys` (YAML lines) into DIR/out;
// its exit status, its log in DIR/sweep.log.
int sweep_current(const fs::path& dir, const std::string& keys) {
  return testing::sweep_yaml(FP8LAB_EXECUTABLE, dir,
                             std::string("workloads: [\"") + kWorkload +
                                 "\"]\nparameters:\n  scaling: {values: [current]}\n" + keys,
                             {});
}

}  // namespace

TEST_CASE("a baseline's record and archive are the same with and without probes", "[probes]") {
  const testing::Scratch dir("probes-cli");
  const std::vector<std::string> base = {FP8LAB_EXECUTABLE, "run", "--baseline-only", "--workload",
                                         kWorkload};
  run_ok(testing::plus(base, {"--out", (dir / "plain").string()}), dir / "plain.log");
  run_ok(testing::plus(base, {"--out", (dir / "probed").string(), "--probe",
                              "current,delayed,nvfp4:nvfp4_stochastic_rounding=true",
                              "--probe-every", "2", "--probe-draws", "2"}),
         dir / "probed.log");
  auto plain = testing::records(dir / "plain", testing::kTimingFields);
  auto probed = testing::records(dir / "probed", testing::kTimingFields);
  REQUIRE(plain.size() == 1);
  REQUIRE(probed.size() == 1);
  const auto& [id, record] = *plain.begin();
  REQUIRE(probed.count(id) == 1);
  auto with = probed.at(id);
  CHECK_FALSE(record.contains("probe_sidecar"));  // probes off: the record as before
  REQUIRE(with.contains("probe_sidecar"));
  const std::string sidecar = with["probe_sidecar"].get<std::string>();
  CHECK(sidecar == "probes/" + id + ".parquet");
  with.erase("probe_sidecar");
  CHECK(nlohmann::json::diff(record, with).dump() == "[]");
  CHECK(record["final"]["eval_loss"].is_number());
  const auto archive = fs::path("baselines") / (id + ".pt");
  CHECK(read_text(dir / "plain" / archive) == read_text(dir / "probed" / archive));

  const auto rows = read_probes(dir / "probed" / sidecar);
  std::set<std::int64_t> steps;
  std::set<std::string> recipes;
  for (const auto& row : rows) {
    steps.insert(row.step);
    recipes.insert(row.recipe);
    CHECK(row.direction == kOnBaseline);
  }
  CHECK(steps == std::set<std::int64_t>{0, 2, 4});
  CHECK(recipes.size() == 3);
}

TEST_CASE("an FP8 run with --probe-every writes its exact-on-run rows", "[probes]") {
  const testing::Scratch dir("probes-fp8");
  run_ok({FP8LAB_EXECUTABLE, "run", "--workload", kWorkload, "--set", "scaling=current",
          "--probe-every", "2", "--out", (dir / "out").string()},
         dir / "run.log");
  std::size_t fp8 = 0;
  for (const auto& [id, record] : testing::records(dir / "out")) {
    if (record["kind"] == "baseline") {
      CHECK_FALSE(record.contains("probe_sidecar"));  // no recipes to probe
      continue;
    }
    ++fp8;
    const auto rows = read_probes(dir / "out" / record["probe_sidecar"].get<std::string>());
    REQUIRE_FALSE(rows.empty());
    std::set<std::int64_t> steps;
    for (const auto& row : rows) {
      steps.insert(row.step);
      CHECK(row.direction == kExactOnRun);
      CHECK(row.recipe == record["recipe_label"].get<std::string>());
      CHECK(row.variant == kAllGemms);
      CHECK(row.draw == 0);
      if (row.tensor == kWholeModel) CHECK(row.rel_error > 0.0);
    }
    CHECK(steps == std::set<std::int64_t>{0, 2, 4});
  }
  CHECK(fp8 == 1);
}

TEST_CASE("a sweep's probes reach its baseline and its FP8 runs", "[probes]") {
  const testing::Scratch dir("probes-sweep");
  require_ok(sweep_current(dir,
                           "seeds: [0]\nprobes: [current, {scaling: current, fp8_format: E5M2}]\n"
                           "probe_every: 2\nprobe_attribution: none\n"),
             dir / "sweep.log");
  std::set<std::string> directions;
  for (const auto& [id, record] : testing::records(dir / "out")) {
    INFO(id);
    REQUIRE(record["probe_sidecar"].is_string());
    for (const auto& row : read_probes(dir / "out" / record["probe_sidecar"].get<std::string>())) {
      directions.insert(row.direction);
      CHECK(row.variant == kAllGemms);  // probe_attribution: none
    }
  }
  CHECK(directions == std::set<std::string>{kOnBaseline, kExactOnRun});
  const auto sweep = testing::read_json(dir / "out" / "sweep.json");
  CHECK(sweep["probes"] == nlohmann::json{"current", "current:fp8_format=E5M2"});
  CHECK(sweep["probe_every"] == 2);
}

TEST_CASE("probe_seeds: only the runs of those seeds probe", "[probes]") {
  const testing::Scratch dir("probes-seeds");
  require_ok(sweep_current(dir, "seeds: [0, 1]\nprobes: [current]\nprobe_every: 2\n"
                                "probe_attribution: none\nprobe_seeds: [1]\n"),
             dir / "sweep.log");
  int probed = 0, unprobed = 0;
  for (const auto& [id, record] : testing::records(dir / "out")) {
    INFO(id);
    const bool has_sidecar = record.contains("probe_sidecar") &&
                             record["probe_sidecar"].is_string();
    CHECK(has_sidecar == (record["seed"] == 1));
    (has_sidecar ? probed : unprobed) += 1;
  }
  CHECK(probed == 2);  // seed 1's baseline and FP8 run
  CHECK(unprobed == 2);
  CHECK(testing::read_json(dir / "out" / "sweep.json")["probe_seeds"] ==
        nlohmann::json::array({1}));
}

TEST_CASE("bad probe keys and flags exit 2 naming the key", "[probes]") {
  const testing::Scratch dir("probes-bad");
  struct Case {
    std::string yaml;     // sweep keys after the workload and recipe
    std::string message;  // part of the error line
  };
  const std::vector<Case> sweeps = {
      {"probes: [nosuch]", "probes[0]: unknown probe recipe 'nosuch'"},
      {"probes: []", "probes: expected a non-empty list"},
      {"probes: [current, current]", "probes[1]"},
      {"probes: [\"mxfp8:margin=2\"]", "margin"},
      {"probes: [{scaling: current, fp8_fromat: E4M3}]", "fp8_fromat"},
      {"probes: [current]\nprobe_every: 0", "probe_every: out of range: '0'"},
      {"probes: [current]\nprobe_draws: many", "probe_draws"},
      {"probes: [current]\nprobe_attribution: some", "probe_attribution: unknown value 'some'"},
      {"probes: [\"current:module_filter.skip_names=[fc*]\"]", "converts no Linear"},
      {"probes: [\"delayed:autoswitch.enabled=true\"]", "autoswitch"},
      {"probes: [current]\nprobe_seeds: [7]", "probe_seeds[0]: is not a seed of this sweep: '7'"},
      {"probes: [current]\nprobe_seeds: [0, 0]", "probe_seeds[1]"},
  };
  int index = 0;
  for (const auto& bad : sweeps) {
    const auto sub = dir / ("case" + std::to_string(index++));
    fs::create_directories(sub);
    INFO(bad.yaml);
    const int code = sweep_current(sub, bad.yaml + "\n");
    const auto text = read_text(sub / "sweep.log");
    INFO(text);
    CHECK(code == 2);
    CHECK_THAT(text, Catch::Contains(bad.message));
    CHECK_THAT(text, Catch::Contains("sweep.yaml"));
    CHECK_FALSE(fs::exists(sub / "out" / "runs"));
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> flags = {
      {{"--probe", "nosuch"}, "--probe: unknown probe recipe 'nosuch'"},
      {{"--probe", "current", "--probe-every", "0"}, "--probe-every"},
      {{"--probe", "current", "--probe-draws", "0"}, "--probe-draws"},
      {{"--probe", "current", "--probe-attribution", "some"}, "--probe-attribution"},
      {{"--probe", "current:module_filter.skip_names=[fc*]"}, "converts no Linear"},
  };
  for (const auto& [extra, message] : flags) {
    const auto out = dir / ("flags" + std::to_string(index++));
    INFO(message);
    const auto log = out.string() + ".log";
    const int code = run_to_end(testing::plus({FP8LAB_EXECUTABLE, "run", "--baseline-only",
                                               "--workload", kWorkload, "--out", out.string()},
                                              extra),
                                log);
    const auto text = read_text(log);
    INFO(text);
    CHECK(code == 2);
    CHECK_THAT(text, Catch::Contains(message));
    CHECK_FALSE(fs::exists(out / "runs"));
  }
}

}  // namespace fp8lab::experiments
