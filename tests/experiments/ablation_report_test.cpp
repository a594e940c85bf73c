// The ablation ranking (experiments/stats/ablation.hpp) on records made up for it: one layer
// carries the loss gap, and the ranking must put it first with the share it explains; a seed
// without a loss is left out and said.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "experiments/stats/ablation.hpp"

#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {
using testing::typed;

nlohmann::json arm_record(const std::string& kind, const std::string& layer, std::int64_t seed,
                          double loss, double baseline) {
  static int serial = 0;
  return {{"run_id", "run" + std::to_string(++serial)},
          {"kind", "fp8"},
          {"workload", "mlp"},
          {"seed", seed},
          {"status", "finished"},
          {"recipe_label", "current E4M3"},
          {"final", {{"eval_loss", loss}, {"baseline_eval_loss", baseline}}},
          {"ablation",
           {{"base_recipe", "scaling=current;..."},
            {"arms", {{{"kind", kind}, {"layer", layer}, {"gemm", "all"}}}}}}};
}

// Seeds 0..3: baselines near 1; "bad" makes a 4% gap (alone 3.8%, removed 3.7%), "fc2" and
// "fc3" a few hundredths of a percent; seed-to-seed noise of about 0.1%.
std::vector<nlohmann::json> planted_records() {
  std::vector<nlohmann::json> records;
  const double noise[] = {0.0, 0.001, -0.0008, 0.0005};
  for (std::int64_t s = 0; s < 4; ++s) {
    const double b = 1.0 + 0.01 * static_cast<double>(s);
    const double e = noise[s] * b;
    const double all = b * 1.04 + e;
    records.push_back(arm_record("all", "", s, all, b));
    records.push_back(arm_record("all_but", "bad", s, all - 0.037 * b + e * 0.5, b));
    records.push_back(arm_record("only", "bad", s, b * 1.038 + e, b));
    records.push_back(arm_record("all_but", "fc2", s, all - 0.0004 * b, b));
    records.push_back(arm_record("only", "fc2", s, b * 1.0003 + e * 0.2, b));
    records.push_back(arm_record("all_but", "fc3", s, all - 0.0002 * b, b));
    records.push_back(arm_record("only", "fc3", s, b * 1.0001 - e * 0.1, b));
  }
  return records;
}

}  // namespace

TEST_CASE("ablation: the layer that carries the gap ranks first", "[report][ablation]") {
  const auto tables = ablation_tables(typed(planted_records()));
  REQUIRE(tables.size() == 1);
  const auto& t = tables[0];
  CHECK(t.workload == "mlp");
  CHECK(t.recipe_label == "current E4M3");
  REQUIRE(t.gap);
  CHECK(t.gap->n == 4);
  CHECK(t.gap->mean == Approx(0.04 + (0.0 + 0.001 - 0.0008 + 0.0005) / 4).epsilon(1e-9));
  REQUIRE(t.layers.size() == 3);
  CHECK(t.layers[0].layer == "bad");
  CHECK(t.layers[1].layer == "fc2");
  CHECK(t.layers[2].layer == "fc3");
  // removed share of "bad": mean(0.037 - e/2 + e ... ) over the gap's mean: about 0.93.
  REQUIRE(t.layers[0].share_removed);
  REQUIRE(t.layers[0].share_alone);
  CHECK(*t.layers[0].share_removed == Approx(0.925).margin(0.01));
  CHECK(*t.layers[0].share_alone == Approx(0.95).margin(0.01));
  CHECK(t.layers[0].share == Approx((*t.layers[0].share_removed + *t.layers[0].share_alone) / 2));
  CHECK(t.layers[1].share < 0.02);
  CHECK(t.layers[0].removed->n == 4);
  CHECK(t.layers[0].removed->low() > 0.0);  // resolved: its interval excludes zero
  CHECK(t.notes.empty());
  const std::string md = ablation_markdown(tables);
  CHECK_THAT(md, Catch::Contains("## Layer ablation"));
  CHECK_THAT(md, Catch::Contains("| 1 | `bad` | all |"));
  CHECK_THAT(md, Catch::Contains("| 3 | `fc3` | all |"));
}

TEST_CASE("ablation: a run without a final loss is left out and said", "[report][ablation]") {
  auto records = planted_records();
  records[1]["final"]["eval_loss"] = nullptr;  // seed 0's all_but bad diverged
  records[1]["status"] = "diverged";
  const auto tables = ablation_tables(typed(records));
  REQUIRE(tables.size() == 1);
  const auto& bad = tables[0].layers[0];
  CHECK(bad.layer == "bad");
  CHECK(bad.removed->n == 3);
  CHECK(bad.alone->n == 4);
  REQUIRE(tables[0].notes.size() == 1);
  CHECK_THAT(tables[0].notes[0], Catch::Contains("(seed 0) has no final eval loss (diverged)"));
  CHECK(ablation_markdown({}).empty());
  CHECK(ablation_tables(typed(std::vector<nlohmann::json>{{{"run_id", "x"}, {"kind", "fp8"}}}))
            .empty());
}

}  // namespace fp8lab::experiments
