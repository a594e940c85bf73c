// Quantization beyond the GEMMs (experiments/linear/beyond_gemm.hpp) against direct computations:
// the LayerNorm affine parameters the residual-mlp block uses are sim's MX quantization of them
// (and a floor scale clips a block of weights clustered at 1.9 to 1.75, where rceil keeps 1.875);
// the activation's input and output go through MX; bf16 is torch's RN rounding; gradients pass
// straight through; nothing changes outside an FP8 region; and a recipe that asks for it on a
// model without such modules, or with a bad value, is refused.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/beyond_gemm.hpp"
#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/residual_mlp_workload.hpp"
#include "recipes/recipe_file.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/stats.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

using recipes::ElementwisePrecision;

recipes::Recipe mx_recipe(const std::string& mode, const std::string& extra) {
  return recipes::parse_recipe_text(
      "scaling: mxfp8\nfp8_format: E4M3\nmx_scale_mode: " + mode + "\n" + extra, "r.yaml");
}

// sim's MX quantization of t as rows of its last dimension, dequantized: the direct computation.
torch::Tensor sim_mx(const torch::Tensor& t, const recipes::ElementwisePlan& plan) {
  const auto host = t.detach().contiguous();
  const auto cols = host.size(-1);
  const auto result = sim::scaling::quantize(
      plan.mx,
      std::span<const float>(host.data_ptr<float>(), static_cast<std::size_t>(host.numel())),
      host.numel() / cols, cols);
  auto values = sim::scaling::dequantize(result.tensor);
  return torch::from_blob(values.data(), host.sizes(), torch::kFloat).clone();
}

// A LayerNorm weight of width 64: block 0 all 1.9 (clustered, as Su et al. describe), block 1 a
// spread; a small bias.
torch::Tensor clustered_weight() {
  auto w = torch::full({64}, 1.9f);
  w.slice(0, 32, 64).copy_(torch::linspace(0.5, 1.5, 32));
  return w;
}

}  // namespace

TEST_CASE("LayerNorm affine parameters: the values the block uses are sim's MX quantization",
          "[beyond_gemm]") {
  ResidualBlock block(64, "gelu");
  {
    torch::NoGradGuard no_grad;
    auto params = block->named_parameters();
    params["norm.weight"].copy_(clustered_weight());
    params["norm.bias"].copy_(torch::linspace(-0.1, 0.1, 64));
  }
  auto params = block->named_parameters();
  const auto weight = params["norm.weight"];
  const auto bias = params["norm.bias"];
  const auto x = torch::randn({8, 64}, make_generator(1, 0));

  for (const std::string mode : {"floor", "rceil"}) {
    INFO("mx_scale_mode " << mode);
    const auto recipe = mx_recipe(mode, "norm_affine_precision: mx\n");
    REQUIRE(apply_beyond_gemm_plans(*block, recipe) == 1);
    const auto& plan = block->beyond_gemm_plans().norm_affine;
    REQUIRE(plan.precision == ElementwisePrecision::kMx);

    Fp8Autocast fp8(true);
    const auto w_q = quantize_beyond_gemm(weight, plan);
    CHECK(torch::equal(w_q, sim_mx(weight, plan)));
    // Independently of sim: 1.9 = 1.9 * 2^0; floor's scale 2^(0 - 8) maps it to 486.4 > 448,
    // clipped to 448 * 2^-8 = 1.75 (-7.9%); rceil's 2^-7 maps it to 243.2 -> 240 * 2^-7 = 1.875.
    const float expected = mode == "floor" ? 1.75f : 1.875f;
    CHECK(torch::equal(w_q.slice(0, 0, 32), torch::full({32}, expected)));

    // The block's LayerNorm output is LayerNorm in bf16 with exactly those parameters.
    const auto z = layer_norm_beyond_gemm(x, weight, bias, 1e-5, plan);
    const auto direct = torch::layer_norm(x.to(torch::kBFloat16), {64},
                                          sim_mx(weight, plan).to(torch::kBFloat16),
                                          sim_mx(bias, plan).to(torch::kBFloat16), 1e-5)
                            .to(torch::kFloat);
    CHECK(torch::equal(z, direct));
  }
}

TEST_CASE("The residual block applies both plans, and only in FP8 regions", "[beyond_gemm]") {
  ResidualBlock block(64, "gelu");
  {
    torch::NoGradGuard no_grad;
    block->named_parameters()["norm.weight"].copy_(clustered_weight());
  }
  const auto x = torch::randn({4, 64}, make_generator(2, 0));
  const auto plain = block->forward(x);  // plans still high: the fp32 block
  const auto recipe = mx_recipe("floor", "norm_affine_precision: mx\nactivation_precision: mx\n");
  apply_beyond_gemm_plans(*block, recipe);
  const auto& plans = block->beyond_gemm_plans();

  CHECK(torch::equal(block->forward(x), plain));  // no FP8 region: eval-like, untouched

  Fp8Autocast fp8(true);
  auto params = block->named_parameters();
  const auto z =
      torch::layer_norm(x.to(torch::kBFloat16), {64},
                        sim_mx(params["norm.weight"], plans.norm_affine).to(torch::kBFloat16),
                        sim_mx(params["norm.bias"], plans.norm_affine).to(torch::kBFloat16), 1e-5)
          .to(torch::kFloat);
  const auto u = forward_linear(*block, "fc1", z);
  const auto a = torch::gelu(sim_mx(u, plans.activation).to(torch::kBFloat16)).to(torch::kFloat);
  const auto direct = x + forward_linear(*block, "fc2", sim_mx(a, plans.activation));
  CHECK(torch::equal(block->forward(x), direct));
  CHECK_FALSE(torch::equal(direct, plain));
}

TEST_CASE("bf16 is RN rounding; gradients pass straight through", "[beyond_gemm]") {
  const auto x = torch::randn({3, 32}, make_generator(3, 0)).mul(7).requires_grad_(true);
  recipes::Recipe recipe;  // delayed: bf16 goes with any scaling
  recipe.activation_precision = ElementwisePrecision::kBf16;
  const auto bf16 = recipes::elementwise_plan(recipe, recipes::BeyondGemm::kActivation);
  const auto mx = recipes::elementwise_plan(mx_recipe("floor", "activation_precision: mx\n"),
                                            recipes::BeyondGemm::kActivation);

  CHECK(torch::equal(quantize_beyond_gemm(x, bf16), x));  // outside an FP8 region
  Fp8Autocast fp8(true);
  const auto q = quantize_beyond_gemm(x, bf16);
  CHECK(torch::equal(q, x.detach().to(torch::kBFloat16).to(torch::kFloat)));
  CHECK_FALSE(torch::equal(q, x.detach()));

  const auto weights = torch::arange(96, torch::kFloat).reshape({3, 32});
  (quantize_beyond_gemm(x, mx) * weights).sum().backward();
  CHECK(torch::equal(x.grad(), weights));

  // mx needs whole blocks along the last dimension.
  CHECK_THROWS_WITH(quantize_beyond_gemm(torch::ones({2, 48}), mx),
                    Catch::Contains("multiple of 32"));
}

TEST_CASE("A model without LayerNorm or activation to quantize refuses the fields",
          "[beyond_gemm]") {
  torch::nn::Sequential plain(torch::nn::Linear(32, 32));
  CHECK(apply_beyond_gemm_plans(*plain, mx_recipe("floor", "")) == 0);
  CHECK_THROWS_WITH(apply_beyond_gemm_plans(*plain, mx_recipe("floor", "norm_affine_precision: "
                                                                       "mx\n")),
                    Catch::Contains("residual-mlp"));
}

TEST_CASE("fp8lab refuses a bad value of the fields with exit 2, naming the field",
          "[beyond_gemm]") {
  namespace fs = std::filesystem;
  const testing::Scratch dir("beyond");
  std::ofstream(dir / "r.yaml") << "scaling: mxfp8\nactivation_precision: fp4\n";
  const auto log = dir / "explain.log";
  CHECK(testing::run_to_end({FP8LAB_EXECUTABLE, "explain", (dir / "r.yaml").string()}, log) == 2);
  const auto text = testing::read_text(log);
  CHECK_THAT(text, Catch::Contains("r.yaml:2"));
  CHECK_THAT(text, Catch::Contains("activation_precision"));
  CHECK_THAT(text, Catch::Contains("high, bf16, mx"));
}

}  // namespace fp8lab::experiments
