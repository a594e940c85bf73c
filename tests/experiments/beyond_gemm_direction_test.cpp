// L3's setting at small scale (docs/literature.md, Su et al. 2025; recipes/sweeps/literature/
// L3-mx-layernorm.yaml's residual-mlp, d 64, lr 2e-2) for 600 steps on seeds 0, 1, 2: MXFP8 E4M3
// with fp32 GEMM accumulation, the GeLU MX-quantized, and {floor, rceil} x LayerNorm parameters
// {mx, high}, with the FP32 baselines. Unstable: the sweep pre-registers L3's rule, a training loss
// above 0.2 after step 200 (`instability:`, recipes/instability_rule.hpp), and the runner applies
// it: such a run gets status `unstable` and its record ends at that step (a baseline trains on).
//
// What is asserted holds on any x86-64 machine: every run trains to a record, finished or
// unstable; the rule was applied exactly (an unstable record's loss exceeds 0.2 at the step it
// names, after step 200, and stops there; no other record has such a loss); the report's
// unstable_runs column is the count of those statuses; and the scale rule and the LayerNorm switch
// reach the numerics (on every seed, the arms' training curves differ from the floor/mx arm's and
// from the baseline's, over the steps both ran).
//
// What is printed and not asserted: the unstable counts (from the records' status). At this learning rate a blow-up within
// 600 steps is chance, FP32 included, and which seed blows up moves with LibTorch's per-CPU last
// bits (experiments/run/cpu_numerics.hpp). Measured with this sweep on an AMD EPYC (AVX2):
// native numerics, floor/mx 1 of 3 (seed 2, peak 178) and every other arm and the baselines 0 of 3;
// FP8LAB_CPU_NUMERICS=portable, the FP32 baseline 1 of 3 (seed 2, 8.4) and every FP8 arm 0 of 3.
// An AMD EPYC with AVX-512 saw floor/mx seed 2 stay at 0.03. So no bound on these counts holds
// on every machine with 3 seeds, and none is asserted (docs/literature.md, L3). About 3 minutes with
// 2 jobs (label torch, not fast).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

constexpr double kUnstableLoss = 0.2;
constexpr int kAfterStep = 200;

const char* const kSweep = R"(name: L3-direction-test
workloads:
  - residual-mlp: {d: 64, batch: 128, eval_batch: 1024, eval_batches: 2, steps: 600,
                   eval_every: 250, lr: 0.02}
seeds: [0, 1, 2]
instability: {loss_above: 0.2, after_step: 200}
base:
  scaling: mxfp8
  fp8_format: E4M3
  gemm.fprop: fp32_seq
  gemm.dgrad: fp32_seq
  gemm.wgrad: fp32_seq
  activation_precision: mx
parameters:
  mx_scale_mode: {values: [floor, rceil]}
  norm_affine_precision: {values: [mx, high]}
)";

struct Arm {
  int runs = 0;
  int unstable = 0;
  std::vector<double> worst;                 // per run: max training loss after kAfterStep
  std::map<int, std::vector<double>> curve;  // seed -> training losses
};

// One CSV line's cells: quoted cells may hold commas and doubled quotes.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The curves of two runs differ on the steps both ran (an unstable run stops early).
bool curves_differ(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = std::min(a.size(), b.size());
  return !std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin());
}

// "floor/mx" for an FP8 record, "baseline" for a baseline.
std::string arm_name(const nlohmann::json& record) {
  if (record["kind"] == "baseline") return "baseline";
  const auto& recipe = record["recipe"];
  return recipe["mx_scale_mode"].get<std::string>() + "/" +
         recipe["norm_affine_precision"].get<std::string>();
}

std::string describe(const std::map<std::string, Arm>& arms) {
  std::ostringstream text;
  for (const auto& [name, arm] : arms) {
    text << name << ": unstable (record status) " << arm.unstable << " of " << arm.runs
         << ", max loss from step " << kAfterStep << " per run:";
    for (double w : arm.worst) text << " " << w;
    text << "\n";
  }
  return text.str();
}

}  // namespace

TEST_CASE(
    "L3 at small scale: every arm trains, and the LayerNorm and scale-rule switches take effect",
    "[beyond_gemm][literature]") {
  const testing::Scratch dir("l3");
  std::ofstream(dir / "sweep.yaml") << kSweep;
  REQUIRE(testing::run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out",
                               (dir / "out").string(), "--jobs", "2"},
                              dir / "sweep.log") == 0);

  std::map<std::string, Arm> arms;
  for (const auto& [id, record] : testing::records(dir / "out")) {
    INFO(id);
    const auto status = record["status"].get<std::string>();
    REQUIRE((status == "finished" || status == "unstable"));
    CHECK(record["instability"]["text"] == "loss_above=0.2,for_steps=1,after_step=200");
    auto& arm = arms[arm_name(record)];
    double worst = 0.0;
    int first_above = -1;
    auto& curve = arm.curve[record["seed"].get<int>()];
    for (const auto& row : record["train"]) {
      const double loss = row["loss"].is_number() ? row["loss"].get<double>() : 1e300;
      curve.push_back(loss);
      const int step = row["step"].get<int>();
      if (step >= kAfterStep) worst = std::max(worst, loss);
      if (step >= kAfterStep && loss > kUnstableLoss && first_above < 0) first_above = step;
    }
    if (status == "unstable") {
      INFO("unstable at " << record["unstable_at_step"] << ", worst " << worst);
      CHECK(record["unstable_at_step"] == first_above);
      CHECK(record["unstable_met_at_step"] == first_above);
      // An FP8 run stops at the step that met the rule; a baseline trains on.
      CHECK(static_cast<int>(curve.size()) ==
            (record["kind"] == "baseline" ? 600 : first_above + 1));
    } else {
      CHECK(first_above == -1);
      CHECK(curve.size() == 600);
    }
    ++arm.runs;
    arm.unstable += status == "unstable" ? 1 : 0;
    arm.worst.push_back(worst);
  }
  // The report counts the same statuses (summary.csv's unstable_runs, one row per requested run).
  {
    std::istringstream csv(testing::read_text(dir / "out" / "summary.csv"));
    std::string line;
    std::getline(csv, line);
    const auto header = csv_cells(line);
    const auto column = [&](const char* name) {
      return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) -
                                      header.begin());
    };
    const auto label_at = column("request_label"), unstable_at = column("unstable_runs");
    REQUIRE(unstable_at < header.size());
    int rows = 0;
    while (std::getline(csv, line)) {
      const auto cells = csv_cells(line);
      REQUIRE(cells.size() > unstable_at);
      // "mx_scale_mode=floor norm_affine_precision=mx" -> "floor/mx".
      const auto& label = cells[label_at];
      const auto mode = label.substr(label.find('=') + 1, label.find(' ') - label.find('=') - 1);
      const auto norm = label.substr(label.rfind('=') + 1);
      INFO(label);
      CHECK(std::stoi(cells[unstable_at]) == arms[mode + "/" + norm].unstable);
      ++rows;
    }
    CHECK(rows == 12);
  }
  // The counts, in the test's output whatever the verdict.
  WARN(describe(arms));
  REQUIRE(arms.size() == 5);
  for (const auto& [name, arm] : arms) REQUIRE(arm.runs == 3);
  for (int seed = 0; seed < 3; ++seed) {
    INFO("seed " << seed);
    const auto& floor_mx = arms["floor/mx"].curve[seed];
    CHECK(curves_differ(floor_mx, arms["rceil/mx"].curve[seed]));    // the exponent bump
    CHECK(curves_differ(floor_mx, arms["floor/high"].curve[seed]));  // LayerNorm high precision
    CHECK(curves_differ(arms["rceil/mx"].curve[seed], arms["rceil/high"].curve[seed]));
    for (const char* arm : {"floor/mx", "rceil/mx", "floor/high", "rceil/high"}) {
      CHECK(curves_differ(arms[arm].curve[seed], arms["baseline"].curve[seed]));
    }
  }
}

}  // namespace fp8lab::experiments
