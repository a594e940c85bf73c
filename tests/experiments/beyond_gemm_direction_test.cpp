// L3's setting at small scale (docs/literature.md, Su et al. 2025; recipes/sweeps/literature/
// L3-mx-layernorm.yaml's residual-mlp, d 64, lr 2e-2) for 600 steps on seeds 0, 1, 2: MXFP8 E4M3
// with fp32 GEMM accumulation, the GeLU MX-quantized, and {floor, rceil} x LayerNorm parameters
// {mx, high}, with the FP32 baselines. Unstable (the literature row's rule): a training loss above
// 0.2 after step 200.
//
// What is asserted holds on any x86-64 machine: every run trains its 600 steps to a record, and
// the scale rule and the LayerNorm switch reach the numerics (on every seed, the arms' training
// curves differ from the floor/mx arm's and from the baseline's).
//
// What is printed and not asserted: the unstable counts. At this learning rate a blow-up within
// 600 steps is chance, FP32 included, and which seed blows up moves with LibTorch's per-CPU last
// bits (experiments/runner/cpu_numerics.hpp). Measured with this sweep on an AMD EPYC (AVX2):
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
    text << name << ": unstable " << arm.unstable << " of " << arm.runs << ", max loss after step "
         << kAfterStep << " per run:";
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
    CHECK(record["status"] == "finished");
    auto& arm = arms[arm_name(record)];
    double worst = 0.0;
    auto& curve = arm.curve[record["seed"].get<int>()];
    for (const auto& row : record["train"]) {
      const double loss = row["loss"].is_number() ? row["loss"].get<double>() : 1e300;
      curve.push_back(loss);
      if (row["step"].get<int>() > kAfterStep) worst = std::max(worst, loss);
    }
    CHECK(curve.size() == 600);
    ++arm.runs;
    arm.unstable += worst > kUnstableLoss ? 1 : 0;
    arm.worst.push_back(worst);
  }
  // The counts, in the test's output whatever the verdict.
  WARN(describe(arms));
  REQUIRE(arms.size() == 5);
  for (const auto& [name, arm] : arms) REQUIRE(arm.runs == 3);
  for (int seed = 0; seed < 3; ++seed) {
    INFO("seed " << seed);
    const auto& floor_mx = arms["floor/mx"].curve[seed];
    CHECK(floor_mx != arms["rceil/mx"].curve[seed]);    // the exponent bump
    CHECK(floor_mx != arms["floor/high"].curve[seed]);  // LayerNorm parameters in high precision
    CHECK(arms["rceil/mx"].curve[seed] != arms["rceil/high"].curve[seed]);
    for (const char* arm : {"floor/mx", "rceil/mx", "floor/high", "rceil/high"}) {
      CHECK(arms[arm].curve[seed] != arms["baseline"].curve[seed]);
    }
  }
}

}  // namespace fp8lab::experiments
