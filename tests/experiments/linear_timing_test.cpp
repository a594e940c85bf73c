// TE's timing of delayed-scaling updates through Fp8Linear and the FP8 autocast regions
// (te-accelerate.md §1.3, §2.5-2.6; docs/numerics.md §2.1):
// - step 0 casts with scale 1.0 (no warm-up);
// - the scale a step casts with comes from the amaxes of the steps before it (forward scales
//   update at the outermost region exit with grad enabled, backward scales at the end of the
//   first FP8 Linear's backward);
// - eval passes run without FP8 and record nothing by default; with use_autocast_during_eval
//   they cast and record, but nothing updates, and the amax merges into the next training step.
// Every expected scale is computed here from the inputs' amaxes with TE's formula
// RN(fp8_max / amax) (margin 0), independently of sim/scaling.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <cmath>
#include <vector>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;
constexpr float kE4M3Max = 448.0f, kE5M2Max = 57344.0f;

recipes::Recipe delayed_recipe(std::int64_t history, recipes::AmaxComputeAlgo algo) {
  recipes::Recipe r = test::fp32_seq_recipe(recipes::Scaling::delayed);
  r.fp8_format = recipes::Fp8Format::kHybrid;
  r.amax_history_len = history;
  r.amax_compute_algo = algo;
  return r;
}

// A tensor whose amax is exactly `amax` (entry [0][0]), other entries smaller.
torch::Tensor with_amax(std::vector<std::int64_t> shape, float amax, std::uint64_t seed) {
  torch::Tensor t = test::normal(shape, seed).clamp(-1.0, 1.0) * (amax * 0.5f);
  t.index_put_({0, 0}, -amax);
  return t;
}

const sc::DelayedScalingLinear& delayed(Fp8LinearImpl& layer) {
  const sc::DelayedScalingLinear* d = SimBackend::delayed_state(layer.scaling_state());
  REQUIRE(d != nullptr);
  return *d;
}

float used_scale(const Fp8LinearImpl& layer, Operand tensor, Gemm role) {
  const OperandStats& s = layer.stats().operand(tensor, role);
  REQUIRE(s.quantizations > 0);
  REQUIRE(s.scale_min == s.scale_max);  // per-tensor: one scale per step
  return s.scale_min;
}

}  // namespace

TEST_CASE("Delayed scaling: step n casts with the scale from the amaxes of steps before n",
          "[linear][timing]") {
  const auto algo = GENERATE(recipes::AmaxComputeAlgo::kMax, recipes::AmaxComputeAlgo::kMostRecent);
  constexpr std::int64_t kHistory = 3;
  INFO("amax_compute_algo " << recipes::name(algo));
  auto backend = std::make_shared<const SimBackend>();
  Fp8LinearImpl layer(test::normal({16, 32}, 1, 0.1).requires_grad_(true),
                      torch::zeros({16}).requires_grad_(true), delayed_recipe(kHistory, algo),
                      backend, HighPrecision::fp32);
  // W gets gradients but no update: its amax stays the same every step.
  const float weight_amax = layer.weight.abs().max().item<float>();

  const std::vector<float> x_amax = {3.0f, 40.0f, 0.75f, 5.0f, 0.5f};
  const std::vector<float> g_amax = {0.5f, 2.0f, 0.03125f, 0.25f, 8.0f};
  for (std::size_t step = 0; step < x_amax.size(); ++step) {
    INFO("step " << step);
    // Expected scales: step 0 uses 1.0; step n uses the window of the last kHistory step amaxes
    // (max) or the previous step's (most_recent).
    auto expected = [&](const std::vector<float>& amaxes, float fp8_max) {
      if (step == 0) return 1.0f;
      float a = amaxes[step - 1];
      if (algo == recipes::AmaxComputeAlgo::kMax) {
        for (std::size_t s = step >= kHistory ? step - kHistory : 0; s < step; ++s) {
          a = std::fmax(a, amaxes[s]);
        }
      }
      return fp8_max / a;
    };
    layer.reset_stats();
    const torch::Tensor x = with_amax({8, 32}, x_amax[step], 10 + step).requires_grad_(true);
    torch::Tensor y;
    {
      Fp8Autocast fp8(true);
      y = layer.forward(x);
      // Inside the region nothing has updated yet.
      CHECK(delayed(layer).forward().update_count() == static_cast<std::int64_t>(step));
    }
    CHECK(delayed(layer).forward().update_count() == static_cast<std::int64_t>(step + 1));
    CHECK(delayed(layer).backward().update_count() == static_cast<std::int64_t>(step));
    y.backward(with_amax({8, 16}, g_amax[step], 20 + step));
    CHECK(delayed(layer).backward().update_count() == static_cast<std::int64_t>(step + 1));

    CHECK(used_scale(layer, Operand::kInput, Gemm::kFprop) == expected(x_amax, kE4M3Max));
    CHECK(used_scale(layer, Operand::kInput, Gemm::kWgrad) == expected(x_amax, kE4M3Max));
    CHECK(used_scale(layer, Operand::kGradOutput, Gemm::kDgrad) == expected(g_amax, kE5M2Max));
    CHECK(used_scale(layer, Operand::kGradOutput, Gemm::kWgrad) == expected(g_amax, kE5M2Max));
    CHECK(used_scale(layer, Operand::kWeight, Gemm::kFprop) ==
          (step == 0 ? 1.0f : kE4M3Max / weight_amax));
    // The amax each cast saw is the tensor's.
    CHECK(layer.stats().operand(Operand::kInput, Gemm::kFprop).amax == x_amax[step]);
    CHECK(layer.stats().operand(Operand::kGradOutput, Gemm::kDgrad).amax == g_amax[step]);
  }
}

TEST_CASE("Eval passes: no FP8 and no amax by default; with use_autocast_during_eval the amax "
          "is recorded, nothing updates, and it merges into the next training step",
          "[linear][timing]") {
  auto backend = std::make_shared<const SimBackend>();
  const bool eval_autocast = GENERATE(false, true);
  INFO("use_autocast_during_eval " << eval_autocast);
  recipes::Recipe recipe = delayed_recipe(4, recipes::AmaxComputeAlgo::kMax);
  recipe.use_autocast_during_eval = eval_autocast;
  torch::nn::Sequential model(torch::nn::Linear(32, 16));
  convert_model(*model, recipe, backend);
  auto& layer = *model->ptr<Fp8LinearImpl>(0);

  // One training step (amax 2), so that there is history to leave untouched.
  {
    model->train();
    torch::Tensor y;
    {
      ContextualFp8Autocast fp8(*model, recipe.use_autocast_during_eval);
      y = model->forward(with_amax({8, 32}, 2.0f, 1));
    }
    y.sum().backward();
  }
  const std::vector<float> history_before = delayed(layer).forward().history_of(0);
  const float scale_before = delayed(layer).forward().scale(0);
  const auto updates_before = delayed(layer).forward().update_count();
  REQUIRE(scale_before == kE4M3Max / 2.0f);

  // Eval with an input of amax 100 (would change the scale if it were recorded and updated).
  model->eval();
  layer.reset_stats();
  torch::Tensor eval_out;
  {
    torch::NoGradGuard no_grad;
    ContextualFp8Autocast fp8(*model, recipe.use_autocast_during_eval);
    eval_out = model->forward(with_amax({8, 32}, 100.0f, 2));
  }
  CHECK(delayed(layer).forward().update_count() == updates_before);
  CHECK(delayed(layer).forward().scale(0) == scale_before);
  std::vector<float> history_after = delayed(layer).forward().history_of(0);
  if (eval_autocast) {
    CHECK(layer.stats().operand(Operand::kInput, Gemm::kFprop).quantizations == 1);
    CHECK(history_after[0] == 100.0f);  // recorded in the running step's row
    history_after[0] = history_before[0];
  } else {
    CHECK(layer.stats().operand(Operand::kInput, Gemm::kFprop).quantizations == 0);
    CHECK(layer.stats().high_precision_gemms[0] == 1);
  }
  CHECK(history_after == history_before);  // otherwise untouched: no roll

  // Next training step with amax 1: its update sees max(eval amax if recorded, 1).
  model->train();
  {
    torch::Tensor y;
    {
      ContextualFp8Autocast fp8(*model, recipe.use_autocast_during_eval);
      y = model->forward(with_amax({8, 32}, 1.0f, 3));
    }
    y.sum().backward();
  }
  const auto history = delayed(layer).forward().history_of(0);
  CHECK(history.back() == (eval_autocast ? 100.0f : 1.0f));  // newest entry
  CHECK(delayed(layer).forward().scale(0) == kE4M3Max / (eval_autocast ? 100.0f : 2.0f));
}

TEST_CASE("No update without grad mode, none inside nested regions, one at the outermost exit",
          "[linear][timing]") {
  auto backend = std::make_shared<const SimBackend>();
  Fp8LinearImpl layer(test::normal({16, 32}, 3), torch::Tensor(),
                      delayed_recipe(4, recipes::AmaxComputeAlgo::kMax), backend,
                      HighPrecision::fp32);
  {
    torch::NoGradGuard no_grad;
    Fp8Autocast fp8(true);
    layer.forward(test::normal({4, 32}, 4));
  }
  CHECK(delayed(layer).forward().update_count() == 0);
  {
    Fp8Autocast outer(true);
    {
      Fp8Autocast inner(true);
      layer.forward(test::normal({4, 32}, 5));
    }
    CHECK(delayed(layer).forward().update_count() == 0);
    {
      Fp8Autocast off(false);  // FP8 off inside: no cast
      layer.reset_stats();
      layer.forward(test::normal({4, 32}, 6));
      CHECK(layer.stats().operand(Operand::kInput, Gemm::kFprop).quantizations == 0);
    }
    layer.forward(test::normal({4, 32}, 7));  // the same Linear twice: still one update
  }
  CHECK(delayed(layer).forward().update_count() == 1);
}

TEST_CASE("Backward scales of every FP8 Linear update once, after the last FP8 backward",
          "[linear][timing]") {
  auto backend = std::make_shared<const SimBackend>();
  recipes::Recipe recipe = delayed_recipe(2, recipes::AmaxComputeAlgo::kMostRecent);
  torch::nn::Sequential model(torch::nn::Linear(32, 32), torch::nn::Linear(32, 16));
  REQUIRE(convert_model(*model, recipe, backend).size() == 2);
  auto& first = *model->ptr<Fp8LinearImpl>(0);
  auto& second = *model->ptr<Fp8LinearImpl>(1);

  const torch::Tensor g = with_amax({8, 16}, 4.0f, 9);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = model->forward(with_amax({8, 32}, 1.0f, 8));
  }
  // The second Linear's backward runs first; the update waits for the first Linear's backward.
  // Run autograd only up to the second Linear's input to observe the in-between state.
  const torch::Tensor hidden_grad =
      torch::autograd::grad({y}, {second.weight}, {g}, /*retain_graph=*/true)[0];
  CHECK(hidden_grad.defined());
  CHECK(delayed(second).backward().update_count() == 0);
  CHECK(delayed(first).backward().update_count() == 0);
  y.backward(g);
  CHECK(delayed(second).backward().update_count() == 1);
  CHECK(delayed(first).backward().update_count() == 1);
  // The second Linear's grad_output is g (amax 4); the first's is dgrad of the second.
  CHECK(delayed(second).backward().scale(0) == kE5M2Max / 4.0f);
  // (The model input needs no gradient, so the first Linear runs wgrad only.)
  CHECK(first.stats().fp8_gemms[static_cast<std::size_t>(Gemm::kDgrad)] == 0);
  const float first_grad_amax = first.stats().operand(Operand::kGradOutput, Gemm::kWgrad).amax;
  CHECK(first_grad_amax > 0.0f);
  CHECK(delayed(first).backward().scale(0) == kE5M2Max / first_grad_amax);
}

}  // namespace fp8lab::experiments
