// Per-GEMM accumulation models and operand routing: an Fp8Linear's y, dx and dW equal, bit for
// bit, the backend's GEMMs called directly on the operands quantized for each GEMM (fresh state of
// the same recipe: the layer's first step uses the same scales), with the recipe's accumulation
// model for that GEMM (recipe.gemm.fprop / dgrad / wgrad), plus the bias in fp32. Swapping each
// GEMM's model between a Hopper one and a non-Hopper one must change that GEMM's bits, so the
// comparison can fail. (Not every pair differs on such data: products of FP8 values have at most
// 8 significant bits, so fp32_seq often equals exact; split and fast accumulation agree when K
// <= 128 or the blocks are MX's 32; the Hopper models' 13-bit alignment is what shows.)
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include "experiments/linear/sim_backend.hpp"
#include "tests/experiments/linear_step.hpp"

namespace fp8lab::experiments {
namespace {

constexpr std::int64_t M = 96, K = 256, N = 64;

ConstMatrix view(const torch::Tensor& t) {
  return {{t.const_data_ptr<float>(), static_cast<std::size_t>(t.numel())}, t.size(0), t.size(1)};
}

torch::Tensor direct_gemm(const LinearBackend& backend, Gemm role, const sim::QuantizedTensor& a,
                          const sim::QuantizedTensor& b, recipes::Accumulation accumulation,
                          std::int64_t rows, std::int64_t cols) {
  torch::Tensor out = torch::empty({rows, cols});
  backend.gemm(
      role, a, b, accumulation,
      {{out.mutable_data_ptr<float>(), static_cast<std::size_t>(out.numel())}, rows, cols});
  return out;
}

}  // namespace

TEST_CASE("Each GEMM runs the recipe's accumulation model on its own operand copies", "[linear]") {
  using recipes::Accumulation;
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::mxfp8);
  const auto models =
      GENERATE(recipes::GemmAccumulation{Accumulation::kHopperFastAccum,
                                         Accumulation::kHopperSplitAccumulator,
                                         Accumulation::kHopperSplitAccumulator},
               recipes::GemmAccumulation{Accumulation::kFp32Seq, Accumulation::kHopperFastAccum,
                                         Accumulation::kExact},
               recipes::GemmAccumulation{Accumulation::kExact, Accumulation::kFp32Seq,
                                         Accumulation::kHopperFastAccum});
  recipes::Recipe recipe = test::fp32_seq_recipe(scaling);
  recipe.gemm = models;
  INFO(recipes::name(scaling) << ": fprop " << recipes::name(models.fprop) << ", dgrad "
                              << recipes::name(models.dgrad) << ", wgrad "
                              << recipes::name(models.wgrad));

  const torch::Tensor x = test::normal({M, K}, 21);
  const torch::Tensor w = test::normal({N, K}, 22, 0.1);
  const torch::Tensor b = test::normal({N}, 23);
  const torch::Tensor g = test::normal({M, N}, 24, 0.01);
  const test::LinearStep got = test::fp8_linear_step(recipe, x, w, b, g);

  SimBackend backend;
  auto state = backend.make_state(recipe);
  auto q = [&](Operand t, Gemm r, const torch::Tensor& v) {
    return backend.quantize(*state, t, r, view(v)).tensor;
  };
  const auto xf = q(Operand::kInput, Gemm::kFprop, x);
  const auto wf = q(Operand::kWeight, Gemm::kFprop, w);
  const auto xw = q(Operand::kInput, Gemm::kWgrad, x);
  const auto wd = q(Operand::kWeight, Gemm::kDgrad, w);
  const auto gd = q(Operand::kGradOutput, Gemm::kDgrad, g);
  const auto gw = q(Operand::kGradOutput, Gemm::kWgrad, g);
  const torch::Tensor y = direct_gemm(backend, Gemm::kFprop, xf, wf, models.fprop, M, N) + b;
  const torch::Tensor dx = direct_gemm(backend, Gemm::kDgrad, gd, wd, models.dgrad, M, K);
  const torch::Tensor dw = direct_gemm(backend, Gemm::kWgrad, gw, xw, models.wgrad, N, K);
  CHECK(test::bitwise_difference(got.y, y) == "");
  CHECK(test::bitwise_difference(got.dx, dx) == "");
  CHECK(test::bitwise_difference(got.dw, dw) == "");

  auto swapped = [](Accumulation a) {
    return a == Accumulation::kHopperFastAccum || a == Accumulation::kHopperSplitAccumulator
               ? Accumulation::kFp32Seq
               : Accumulation::kHopperFastAccum;
  };
  recipes::Recipe other_recipe = recipe;
  other_recipe.gemm = {swapped(models.fprop), swapped(models.dgrad), swapped(models.wgrad)};
  const test::LinearStep other = test::fp8_linear_step(other_recipe, x, w, b, g);
  CHECK(test::bitwise_difference(other.y, got.y) != "");
  CHECK(test::bitwise_difference(other.dx, got.dx) != "");
  CHECK(test::bitwise_difference(other.dw, got.dw) != "");
}

}  // namespace fp8lab::experiments
