// The new workloads' modules (llama_modules.hpp, residual_mlp_workload.hpp) against independent
// float64 references written here from the papers' formulas: the float32 module's output and the
// gradients of a random projection of it, with respect to its input and every parameter, must
// match a float64 autograd run of the reference on the same values. Blocks are checked twice: with
// torch's Linear, and with the baseline's HighPrecisionLinear (convert_model), whose backward is
// fp8lab's own.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/llama_modules.hpp"
#include "experiments/workloads/residual_mlp_workload.hpp"
#include "recipes/default_recipe.hpp"

namespace fp8lab::experiments {
namespace {

using Parameters = std::map<std::string, torch::Tensor>;
using Reference = std::function<torch::Tensor(const torch::Tensor&, const Parameters&)>;

// Largest |a - b| over the largest |b|: the error relative to the tensor's scale.
double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  const auto scale = b.abs().max().item<double>();
  return (a.to(torch::kDouble) - b).abs().max().item<double>() / (scale > 0 ? scale : 1.0);
}

// Runs `forward` (float32) and `reference` (float64 copies of x and the parameters) on x, backs
// both up from sum(y * g) for a fixed random g, and compares outputs and every gradient.
void check_against_float64(torch::nn::Module& module,
                           const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                           const Reference& reference, torch::Tensor x, double tolerance = 2e-5) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
  x = x.detach().requires_grad_(true);
  const auto y = forward(x);
  const auto g = torch::randn(y.sizes(), generator);
  module.zero_grad();
  (y * g).sum().backward();

  Parameters reference_parameters;
  for (const auto& item : module.named_parameters()) {
    reference_parameters[item.key()] =
        item.value().detach().to(torch::kDouble).requires_grad_(true);
  }
  const auto x64 = x.detach().to(torch::kDouble).requires_grad_(true);
  const auto y64 = reference(x64, reference_parameters);
  (y64 * g.to(torch::kDouble)).sum().backward();

  INFO("output");
  CHECK(relative_error(y.detach(), y64.detach()) < tolerance);
  INFO("input gradient");
  CHECK(relative_error(x.grad(), x64.grad()) < tolerance);
  for (const auto& item : module.named_parameters()) {
    INFO("gradient of " << item.key());
    REQUIRE(item.value().grad().defined());
    CHECK(relative_error(item.value().grad(), reference_parameters.at(item.key()).grad()) <
          tolerance);
  }
}

torch::Tensor randn(std::vector<std::int64_t> shape, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randn(shape, generator);
}

// Linear weights with a spread that keeps activations O(1).
void randomize(torch::nn::Module& module, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& item : module.named_parameters()) {
    auto& p = item.value();
    if (p.dim() == 2) {
      p.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(p.size(1))), generator);
    } else {
      p.normal_(1.0, 0.3, generator);  // norm weights (and biases) away from their init
    }
  }
}

// --- float64 references, from the formulas ---------------------------------------------------

torch::Tensor rms_norm_ref(const torch::Tensor& x, const torch::Tensor& w) {
  return x / torch::sqrt(x.pow(2).mean(-1, true) + 1e-5) * w;
}

// Su et al. 2021 in the Llama "rotate half" pairing: channel i and i + half form the complex
// number (x_i, x_{i+half}), multiplied by exp(i * position * base^(-2i/head_dim)).
torch::Tensor rope_ref(const torch::Tensor& x) {
  const auto time = x.size(-2), dim = x.size(-1), half = dim / 2;
  const auto options = torch::TensorOptions().dtype(torch::kDouble);
  const auto frequency = torch::pow(10000.0, -2.0 * torch::arange(half, options) / dim);
  const auto angle = torch::outer(torch::arange(time, options), frequency);
  const auto re = x.slice(-1, 0, half), im = x.slice(-1, half);
  return torch::cat({re * angle.cos() - im * angle.sin(), re * angle.sin() + im * angle.cos()}, -1);
}

torch::Tensor attention_ref(const torch::Tensor& x, const Parameters& p, const std::string& at,
                            std::int64_t heads) {
  const auto b = x.size(0), t = x.size(1), d = x.size(2), hd = d / heads;
  auto project = [&](const char* name) {
    return torch::matmul(x, p.at(at + name).t()).view({b, t, heads, hd}).transpose(1, 2);
  };
  const auto q = rope_ref(project("q_proj.weight")), k = rope_ref(project("k_proj.weight"));
  const auto v = project("v_proj.weight");
  auto out = torch::zeros({b, heads, t, hd}, x.options());
  std::vector<torch::Tensor> rows;
  for (std::int64_t i = 0; i < t; ++i) {  // position i attends to positions 0..i
    const auto scores =
        torch::matmul(q.slice(2, i, i + 1), k.slice(2, 0, i + 1).transpose(-2, -1)) /
        std::sqrt(static_cast<double>(hd));
    rows.push_back(torch::matmul(torch::softmax(scores, -1), v.slice(2, 0, i + 1)));
  }
  const auto attended = torch::cat(rows, 2).transpose(1, 2).reshape({b, t, d});
  return torch::matmul(attended, p.at(at + "o_proj.weight").t());
}

torch::Tensor swiglu_ref(const torch::Tensor& x, const Parameters& p, const std::string& at) {
  const auto gate = torch::matmul(x, p.at(at + "gate_proj.weight").t());
  const auto up = torch::matmul(x, p.at(at + "up_proj.weight").t());
  return torch::matmul(gate * torch::sigmoid(gate) * up, p.at(at + "down_proj.weight").t());
}

torch::Tensor llama_block_ref(const torch::Tensor& x, const Parameters& p, std::int64_t heads,
                              const torch::Tensor& channel_scale) {
  const auto c = channel_scale.to(torch::kDouble);
  const auto h =
      x + attention_ref(rms_norm_ref(x, p.at("attention_norm.weight")) * c, p, "attention.", heads);
  return h + swiglu_ref(rms_norm_ref(h, p.at("mlp_norm.weight")) * c, p, "mlp.");
}

torch::Tensor residual_block_ref(const torch::Tensor& x, const Parameters& p, bool swiglu) {
  const auto mean = x.mean(-1, true);
  const auto variance = (x - mean).pow(2).mean(-1, true);
  const auto normalized = (x - mean) / torch::sqrt(variance + 1e-5) * p.at("norm.weight") +
                          p.at("norm.bias");
  const auto u = torch::matmul(normalized, p.at("fc1.weight").t());
  torch::Tensor h;
  if (swiglu) {
    const auto halves = u.chunk(2, -1);
    h = halves[0] * halves[1] * torch::sigmoid(halves[1]);
  } else {
    h = 0.5 * u * (1.0 + torch::erf(u / std::sqrt(2.0)));  // exact GeLU
  }
  return x + torch::matmul(h, p.at("fc2.weight").t()) + p.at("fc2.bias");
}

}  // namespace

TEST_CASE("RMSNorm matches its formula in float64, forward and backward", "[workloads]") {
  RmsNorm norm(16);
  randomize(*norm, 1);
  check_against_float64(
      *norm, [&](const torch::Tensor& x) { return norm->forward(x); },
      [](const torch::Tensor& x, const Parameters& p) { return rms_norm_ref(x, p.at("weight")); },
      randn({3, 5, 16}, 2));
}

TEST_CASE("RoPE rotates channel pairs by position and keeps only relative positions",
          "[workloads]") {
  const auto tables = rope_tables(12, 8);
  torch::nn::Module none;
  check_against_float64(
      none, [&](const torch::Tensor& x) { return apply_rope(x, tables); },
      [](const torch::Tensor& x, const Parameters&) { return rope_ref(x); },
      randn({2, 3, 12, 8}, 3), 1e-6);
  // q at position m and k at position n: the score depends on m - n only.
  const auto q = randn({1, 1, 1, 8}, 4).expand({1, 1, 12, 8}).contiguous();
  const auto k = randn({1, 1, 1, 8}, 5).expand({1, 1, 12, 8}).contiguous();
  const auto scores =
      torch::matmul(apply_rope(q, tables), apply_rope(k, tables).transpose(-2, -1)).squeeze();
  const double scale = scores.abs().max().item<double>();
  for (const std::int64_t offset : {-5, -2, -1, 0, 1, 3}) {
    const auto diagonal = scores.diagonal(offset);
    INFO("m - n = " << -offset << ": " << diagonal);
    CHECK((diagonal - diagonal[0]).abs().max().item<double>() < 1e-5 * scale);
  }
  CHECK_FALSE(torch::allclose(scores.diagonal(0)[0], scores.diagonal(-1)[0]));
}

TEST_CASE("Causal attention matches a position-by-position float64 reference", "[workloads]") {
  CausalSelfAttention attention(16, 2);
  randomize(*attention, 6);
  const auto tables = rope_tables(8, 8);
  check_against_float64(
      *attention, [&](const torch::Tensor& x) { return attention->forward(x, tables); },
      [](const torch::Tensor& x, const Parameters& p) { return attention_ref(x, p, "", 2); },
      randn({2, 8, 16}, 7));
  // Causality: changing the last position changes no earlier output.
  auto x = randn({1, 8, 16}, 8);
  auto changed = x.clone();
  changed.select(1, 7).add_(1.0);
  torch::NoGradGuard no_grad;
  CHECK(torch::equal(attention->forward(x, tables).slice(1, 0, 7),
                     attention->forward(changed, tables).slice(1, 0, 7)));
}

TEST_CASE("SwiGLU matches its formula in float64", "[workloads]") {
  SwiGluMlp mlp(16, 32);
  randomize(*mlp, 9);
  check_against_float64(
      *mlp, [&](const torch::Tensor& x) { return mlp->forward(x); },
      [](const torch::Tensor& x, const Parameters& p) { return swiglu_ref(x, p, ""); },
      randn({2, 4, 16}, 10));
}

// Smooth-SwiGLU divides up_proj's output by its per-token max and multiplies the down
// projection's output back: in exact arithmetic the plain MLP. The float32 module is compared with
// the plain float64 reference at the tolerance of every module here (2e-5 of the tensor's largest
// value): the scale adds one division and one multiplication per element (2^-24 relative each) to
// the plain module's fp32 roundings, and the gradients flow through the same two operations
// (s is detached, so no gradient term of its own).
TEST_CASE("Smooth-SwiGLU equals the plain SwiGLU MLP in float64, forward and backward",
          "[workloads]") {
  SwiGluMlp mlp(16, 32, /*smooth=*/true);
  randomize(*mlp, 9);
  {
    torch::NoGradGuard no_grad;  // a wide range of per-token maxima, so that the scales differ
    mlp->named_parameters()["up_proj.weight"].mul_(50.0);
  }
  const auto x = randn({2, 4, 16}, 10) * torch::linspace(0.01, 10.0, 8).view({2, 4, 1});
  check_against_float64(
      *mlp, [&](const torch::Tensor& in) { return mlp->forward(in); },
      [](const torch::Tensor& in, const Parameters& p) { return swiglu_ref(in, p, ""); }, x);
}

// Under FP8 the down projection quantizes silu(gate) * up / s: each token's row of up / s has
// max 1, so the down projection's input amax is max |silu(gate) * (up / s)|, computed here from
// the same FP8 gate and up outputs (current scaling is stateless: a second call gives the same
// bits), against max |silu(gate) * up| without the scale.
TEST_CASE("Smooth-SwiGLU sets the FP8 down projection's input amax", "[workloads]") {
  const bool smooth = GENERATE(false, true);
  INFO((smooth ? "Smooth-SwiGLU" : "plain SwiGLU"));
  SwiGluMlp mlp(16, 32, smooth);
  randomize(*mlp, 21);
  {
    torch::NoGradGuard no_grad;
    mlp->named_parameters()["up_proj.weight"].mul_(40.0);  // up's maxima well above silu(gate)'s
  }
  auto recipe = recipes::recipe_with_defaults(recipes::Scaling::current);
  recipe.gemm = {sim::Accumulation::kFp32Seq, sim::Accumulation::kFp32Seq,
                 sim::Accumulation::kFp32Seq};
  const auto converted = convert_model(*mlp, recipe, std::make_shared<const SimBackend>());
  REQUIRE(converted.size() == 3);
  auto linear = [&](const std::string& name) {
    return mlp->named_children()[name]->as<Fp8LinearImpl>();
  };
  REQUIRE(linear("down_proj") != nullptr);
  const auto x = randn({2, 4, 16}, 22);
  torch::Tensor gate, up;
  {
    torch::NoGradGuard no_grad;
    Fp8Autocast fp8(true);
    mlp->forward(x);
    gate = torch::silu(forward_linear(*mlp, "gate_proj", x));
    up = forward_linear(*mlp, "up_proj", x);
  }
  const auto s = up.abs().amax(-1, true);
  const float plain_amax = (gate * up).abs().max().item<float>();
  const float smooth_amax = (gate * (up / s)).abs().max().item<float>();
  const float amax = linear("down_proj")->stats().operand(Operand::kInput, Gemm::kFprop).amax;
  CHECK(amax == (smooth ? smooth_amax : plain_amax));
  // The scale bounds each row by silu(gate)'s max; without it up's size comes through.
  CHECK(smooth_amax <= gate.abs().max().item<float>());
  CHECK(plain_amax > 10.0f * smooth_amax);
}

TEST_CASE("The llama block matches float64, with torch's and the baseline's Linear",
          "[workloads]") {
  const bool high_precision = GENERATE(false, true);
  INFO((high_precision ? "HighPrecisionLinear" : "torch::nn::Linear"));
  auto scale = torch::ones({16});
  scale.slice(0, 0, 2).fill_(4.0);  // outlier channels
  LlamaBlock block(16, 2, 32, scale);
  randomize(*block, 11);
  if (high_precision) {
    convert_model_to_high_precision(*block, std::make_shared<const SimBackend>());
  }
  const auto tables = rope_tables(6, 8);
  check_against_float64(
      *block, [&](const torch::Tensor& x) { return block->forward(x, tables); },
      [&](const torch::Tensor& x, const Parameters& p) { return llama_block_ref(x, p, 2, scale); },
      randn({2, 6, 16}, 12));
}

TEST_CASE("The residual-mlp block matches float64 with GeLU and SwiGLU, both Linears",
          "[workloads]") {
  const auto activation = GENERATE(std::string("gelu"), std::string("swiglu"));
  const bool high_precision = GENERATE(false, true);
  INFO(activation << (high_precision ? ", HighPrecisionLinear" : ", torch::nn::Linear"));
  ResidualBlock block(16, activation);
  randomize(*block, 13);
  if (high_precision) {
    convert_model_to_high_precision(*block, std::make_shared<const SimBackend>());
  }
  check_against_float64(
      *block, [&](const torch::Tensor& x) { return block->forward(x); },
      [&](const torch::Tensor& x, const Parameters& p) {
        return residual_block_ref(x, p, activation == "swiglu");
      },
      randn({8, 16}, 14));
}

}  // namespace fp8lab::experiments
