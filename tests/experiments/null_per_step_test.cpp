// The per-step null (issue 31 §6): the sweep key null_runs with its arms and null_noise (errors
// with file, line and what is accepted), the operand noise itself (as large as the sizing
// recipe's quantization error, element by element, with seeded random signs), and a real sweep
// that runs both arms and reports which floor its verdicts are read against.
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/linear/high_precision_linear.hpp"
#include "experiments/linear/operand_noise.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/linear/what_if.hpp"
#include "recipes/error.hpp"
#include "recipes/sweep.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/stats.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using recipes::NullArm;
using testing::read_text;
using testing::run_to_end;

recipes::Sweep sweep_text(const std::string& lines) {
  return recipes::parse_sweep_text("workloads: [w]\n" + lines + "\n", "s.yaml");
}

// [rows, cols] values spread over several binades, from a fixed seed (splitmix64).
std::vector<float> spread_values(std::int64_t rows, std::int64_t cols) {
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  std::uint64_t state = 7;
  for (auto& v : x) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) / 9007199254740992.0;  // [0, 1)
    v = static_cast<float>((u - 0.5) * std::exp2(8.0 * u - 4.0));
  }
  return x;
}

}  // namespace

TEST_CASE("null_runs: true is the once arm; a list names the arms; null_noise sizes per_step",
          "[null][sweep]") {
  CHECK(sweep_text("").null_runs.empty());
  CHECK(sweep_text("null_runs: false").null_runs.empty());
  // Double parentheses: a plain bool, since NullArm has no operator<< for Catch to print.
  CHECK((sweep_text("null_runs: true").null_runs == std::vector<NullArm>{NullArm::once}));
  const auto both = sweep_text("null_runs: [once, per_step]");
  CHECK((both.null_runs == std::vector<NullArm>{NullArm::once, NullArm::per_step}));
  CHECK(both.null_noise == "current");
  CHECK(sweep_text("null_runs: [per_step]\nnull_noise: mxfp8").null_noise == "mxfp8");
  CHECK_THAT(recipes::format_dry_run(recipes::expand(both)),
             Catch::Contains("null runs (the chaos floor) on every workload and seed: once, "
                             "per_step (sized by current)"));

  CHECK_THROWS_WITH(sweep_text("null_runs: maybe"),
                    "s.yaml:2: null_runs: expected a boolean or a list, got 'maybe'; accepted: "
                    "true, false, or a list of once, per_step, e.g. [once, per_step]");
  CHECK_THROWS_WITH(sweep_text("null_runs: []"),
                    Catch::StartsWith("s.yaml:2: null_runs: expected a boolean or a non-empty "
                                      "list, got '[]'"));
  CHECK_THROWS_WITH(sweep_text("null_runs: [once, perstep]"),
                    Catch::StartsWith("s.yaml:2: null_runs[1]: unknown null arm 'perstep'") &&
                        Catch::Contains("accepted: once, per_step") &&
                        Catch::Contains("did you mean 'per_step'?"));
  CHECK_THROWS_WITH(sweep_text("null_runs: [once, once]"),
                    "s.yaml:2: null_runs[1]: is given twice: 'once'; accepted: once, per_step");
  CHECK_THROWS_WITH(sweep_text("null_runs: true\nnull_noise: mxfp8"),
                    Catch::StartsWith("s.yaml:3: null_noise: sizes the per_step null arm, which "
                                      "null_runs does not list: 'mxfp8'"));
  CHECK_THROWS_WITH(sweep_text("null_runs: [per_step]\nnull_noise: delayed"),
                    Catch::StartsWith("s.yaml:3: null_noise") && Catch::Contains("delayed"));
}

TEST_CASE("Operand noise: the sizing recipe's quantization error per element, seeded signs",
          "[null][noise]") {
  const std::int64_t rows = 64, cols = 96;
  const std::vector<float> x = spread_values(rows, cols);
  const WhatIfRecipes sizing = lower_what_if({"current"}, "test");
  const auto& plan = sizing.front().plans[static_cast<std::size_t>(Operand::kInput)]
                                         [static_cast<std::size_t>(Gemm::kFprop)];
  const auto q = sim::scaling::quantize(plan, x, rows, cols);
  const std::vector<float> xhat = sim::scaling::dequantize(q.tensor);

  OperandNoise noise(sizing.front(), /*seed=*/3, /*layer=*/1);
  std::vector<float> a = x;
  noise.perturb(Operand::kInput, Gemm::kFprop, a, rows, cols);
  std::size_t plus = 0, changed = 0;
  double signal = 0, error = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i << ": x " << x[i] << ", x_hat " << xhat[i] << ", perturbed " << a[i]);
    const float size = std::fabs(xhat[i] - x[i]);
    const bool sign = noise_sign(3, 1, 0, i);
    CHECK(a[i] == (sign ? x[i] + size : x[i] - size));
    plus += sign;
    changed += a[i] != x[i];
    signal += static_cast<double>(x[i]) * x[i];
    error += static_cast<double>(xhat[i] - x[i]) * (xhat[i] - x[i]);
  }
  // Fair signs: 6144 draws, 4 standard deviations (39) either side of half.
  CHECK(plus > x.size() / 2 - 160);
  CHECK(plus < x.size() / 2 + 160);
  CHECK(changed > x.size() / 2);  // FP8 rounds most of these values
  const NoiseEnergy& energy = noise.energy()[0][0];
  CHECK(energy.elements == x.size());
  CHECK(energy.sqnr_db() == Approx(10 * std::log10(signal / error)).epsilon(1e-9));
  CHECK(energy.sqnr_db() > 20.0);  // E4M3's 3 mantissa bits: about 30 dB on such data
  CHECK(energy.sqnr_db() < 40.0);

  // Reproducible: the same seed, layer and call order give the same bits; the next call (the
  // next step) and another layer draw other signs.
  OperandNoise again(sizing.front(), 3, 1);
  std::vector<float> b = x;
  again.perturb(Operand::kInput, Gemm::kFprop, b, rows, cols);
  CHECK(a == b);
  std::vector<float> next = x;
  again.perturb(Operand::kInput, Gemm::kFprop, next, rows, cols);
  CHECK(next != a);
  OperandNoise other_layer(sizing.front(), 3, 2);
  std::vector<float> c = x;
  other_layer.perturb(Operand::kInput, Gemm::kFprop, c, rows, cols);
  CHECK(c != a);
}

TEST_CASE("The high-precision Linear adds the noise in training passes only, to every GEMM",
          "[null][noise]") {
  torch::manual_seed(0);
  const torch::Tensor weight = torch::randn({48, 64});
  const torch::Tensor input = torch::randn({32, 64});
  const auto sim = std::make_shared<const SimBackend>();
  const WhatIfRecipes sizing = lower_what_if({"current"}, "test");
  auto run = [&](bool noisy, bool grad) {
    HighPrecisionLinear linear(weight.clone().set_requires_grad(true), torch::Tensor(), sim,
                               HighPrecision::fp32);
    auto noise = std::make_shared<OperandNoise>(sizing.front(), 5, 0);
    if (noisy) linear->set_noise(noise);
    const torch::Tensor x = input.clone().set_requires_grad(grad);
    std::optional<torch::NoGradGuard> no_grad;
    if (!grad) no_grad.emplace();
    const torch::Tensor y = linear->forward(x);
    torch::Tensor dx, dw;
    if (grad) {
      y.sum().backward();
      dx = x.grad();
      dw = linear->weight.grad();
    }
    return std::tuple(y.detach(), dx, dw, noise->energy());
  };
  const auto [y_eval, dx0, dw0, eval_energy] = run(true, false);
  const auto [y_plain, dx1, dw1, plain_energy] = run(false, false);
  CHECK(torch::equal(y_eval, y_plain));  // an eval pass (no autograd): untouched
  for (const auto& row : eval_energy) {
    for (const auto& e : row) CHECK(e.elements == 0);
  }
  const auto [y_train, dx, dw, energy] = run(true, true);
  const auto [y_ref, dx_ref, dw_ref, no_energy] = run(false, true);
  CHECK(torch::equal(y_ref, y_plain));
  CHECK_FALSE(torch::equal(y_train, y_ref));  // fprop perturbed
  CHECK_FALSE(torch::equal(dx, dx_ref));      // dgrad perturbed
  CHECK_FALSE(torch::equal(dw, dw_ref));      // wgrad perturbed
  // Every operand of the three GEMMs, [tensor][gemm]: the element counts of x, W and dy.
  CHECK(energy[0][0].elements == 32 * 64);  // input, fprop
  CHECK(energy[1][0].elements == 48 * 64);  // weight, fprop
  CHECK(energy[2][1].elements == 32 * 48);  // grad_output, dgrad
  CHECK(energy[1][1].elements == 48 * 64);  // weight, dgrad
  CHECK(energy[2][2].elements == 32 * 48);  // grad_output, wgrad
  CHECK(energy[0][2].elements == 32 * 64);  // input, wgrad
  // The same seed and calls: the same bits.
  const auto [y_again, dx_again, dw_again, energy_again] = run(true, true);
  CHECK(torch::equal(y_again, y_train));
  CHECK(torch::equal(dw_again, dw));
}

TEST_CASE("A sweep with null_runs [once, per_step] runs both arms; verdicts are read against "
          "the per_step floor",
          "[null][sweep][report]") {
  const testing::Scratch dir("null-per-step");
  REQUIRE(testing::mlp_format_sweep(
              FP8LAB_EXECUTABLE, dir, "HYBRID",
              "seeds: [0, 1, 2]\nnull_runs: [once, per_step]\nnull_noise: current\n") == 0);
  const auto sweep = testing::read_json(dir / "out" / "sweep.json");
  CHECK(sweep["null_runs"] == true);
  CHECK(sweep["null_arms"] == nlohmann::json({"once", "per_step"}));
  CHECK(sweep["null_noise"] == "current");
  for (int seed = 0; seed < 3; ++seed) {
    INFO("seed " << seed);
    const std::string baseline = "baseline-mlp-seed" + std::to_string(seed) + "-fp32-steps4";
    const auto once = testing::read_json(dir / "out" / "runs" / ("null-" + baseline + ".json"));
    CHECK(once["null_arm"] == "once");
    const auto per_step =
        testing::read_json(dir / "out" / "runs" / ("null-per_step-" + baseline + ".json"));
    const auto base = testing::read_json(dir / "out" / "runs" / (baseline + ".json"));
    CHECK(per_step["kind"] == "null");
    CHECK(per_step["status"] == "finished");
    CHECK(per_step["null_arm"] == "per_step");
    CHECK_THAT(per_step["perturbation"].get<std::string>(), Catch::Contains("current"));
    // The record says how the noise was sized and how large it was: FP8's few bits.
    CHECK(per_step["null_noise"]["sized_by"] == "current");
    const double sqnr = per_step["null_noise"]["sqnr_db"].get<double>();
    CHECK(sqnr > 15.0);
    CHECK(sqnr < 45.0);
    CHECK(per_step["null_noise"]["operands"].contains("grad_output/wgrad"));
    // Training steps are perturbed, so the run leaves its baseline.
    CHECK(per_step["train"][0]["loss"] != base["train"][0]["loss"]);
    CHECK(per_step["final"]["train_loss"] != base["final"]["train_loss"]);
  }
  // The same null run again, alone: the same bits (seeded signs).
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--seed", "1", "--steps", "4",
                      "--null-run", "--null-arm", "per_step", "--out", (dir / "again").string()},
                     dir / "again.log") == 0);
  const auto first = testing::read_json(dir / "out" / "runs" /
                                        "null-per_step-baseline-mlp-seed1-fp32-steps4.json");
  const auto second = testing::read_json(dir / "again" / "runs" /
                                         "null-per_step-baseline-mlp-seed1-fp32-steps4.json");
  CHECK(first["train"] == second["train"]);
  CHECK(first["null_noise"] == second["null_noise"]);

  const auto md = read_text(dir / "out" / "report.md");
  CHECK_THAT(md, Catch::Contains("- mlp: chaos floor, once null arm (paired tail error) "));
  CHECK_THAT(md, Catch::Contains("- mlp: chaos floor, per_step null arm (paired tail error) "));
  CHECK_THAT(md, Catch::Contains("each verdict is read against its family's per_step chaos floor"));
  CHECK_THAT(md, Catch::Contains("| per_step: sd "));
  const auto csv = read_text(dir / "out" / "summary.csv");
  CHECK_THAT(csv, Catch::Contains(",chaos_floor_sd,chaos_floor_arm,"));
  CHECK_THAT(csv, Catch::Contains(",per_step,"));
}

TEST_CASE("fp8lab run refuses a bad --null-arm or --null-noise with exit 2", "[null][cli]") {
  const testing::Scratch dir("null-cli");
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{
        FP8LAB_EXECUTABLE, "run",   "--workload",          "mlp", "--steps", "1",
        "--null-run",      "--out", (dir / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_to_end(args, dir / "run.log");
  };
  CHECK(run({"--null-arm", "sometimes"}) == 2);
  CHECK_THAT(read_text(dir / "run.log"),
             Catch::Contains("--null-arm 'sometimes': accepted once, per_step"));
  CHECK(run({"--null-noise", "mxfp8"}) == 2);
  CHECK_THAT(read_text(dir / "run.log"),
             Catch::Contains("--null-noise 'mxfp8' sizes the per_step null arm"));
  CHECK(run({"--null-arm", "per_step", "--null-noise", "delayed"}) == 2);
  CHECK_THAT(read_text(dir / "run.log"), Catch::Contains("delayed"));
  CHECK_FALSE(fs::exists(dir / "out" / "runs"));
}

}  // namespace fp8lab::experiments
