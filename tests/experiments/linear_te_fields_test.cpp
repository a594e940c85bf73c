// TE's recipe fields mx_2d and backward_override in the Linear (recipes/recipe.hpp; docs/fp4.md,
// "TE's MXFP8 2-D weights and backward_override"), on the sim backend:
// - mx_2d: the weight codes the trained Linear reads in fprop and in dgrad are one 32 x 32-tile
//   quantization of W (sim::scaling::quantize_mx_2d), and y is the GEMM of those codes;
// - backward_override dequantized: the only quantizations are the fprop GEMM's; dX and dW are the
//   high-precision GEMMs of the unquantized dY with those codes dequantized, bit for bit;
//   high_precision gives override_linear_precision [false, true, true]'s bits;
// - a per-tensor operand quantized once for its two GEMMs (SimBackend::quantizes_alike) gives the
//   bits of a backend that quantizes it for each (RecordingBackend), step after step.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2
#include "recording_backend.hpp"

#include <cstdint>
#include <memory>
#include <vector>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;
using test::compare;
using test::Recorded;
using test::RecordingBackend;
constexpr std::int64_t M = 64, K = 96, N = 64;  // tokens, in_features, out_features

struct Step {
  torch::Tensor x, w, g, y, dx, dw;
};

// One forward and backward of a bias-free Linear [N, K] on x [M, K] with upstream gradient g.
Step run_step(const recipes::Recipe& recipe, const std::shared_ptr<const LinearBackend>& backend) {
  Step s;
  s.x = test::normal({M, K}, 11);
  s.w = test::normal({N, K}, 12, 0.1);
  s.g = test::normal({M, N}, 13, 0.01);
  // An outlier in one weight tile and one input block, so that tile and block scales differ.
  s.w.index_put_({3, 40}, 3.0f);
  s.x.index_put_({5, 7}, 40.0f);
  Fp8Linear layer(Fp8LinearImpl(s.w.clone().requires_grad_(true), torch::Tensor(), recipe, backend,
                                HighPrecision::fp32, "layer"));
  const torch::Tensor xv = s.x.clone().requires_grad_(true);
  {
    Fp8Autocast fp8(true);
    s.y = layer->forward(xv);
  }
  s.y.backward(s.g);
  s.dx = xv.grad();
  s.dw = layer->weight.grad();
  return s;
}

const Recorded& find(const std::vector<Recorded>& calls, Operand tensor, Gemm role) {
  for (const auto& c : calls)
    if (c.tensor == tensor && c.role == role) return c;
  FAIL("no quantize call for " << name(tensor) << " of " << name(role));
  throw std::logic_error("unreachable");
}

torch::Tensor as_tensor(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return torch::from_blob(const_cast<float*>(v.data()), {rows, cols}, torch::kFloat).clone();
}

ConstMatrix view(const torch::Tensor& t) {
  return {{t.const_data_ptr<float>(), static_cast<std::size_t>(t.numel())}, t.size(0), t.size(1)};
}

// The sim backend's high-precision GEMM `role` of a and b (fp32), as the Linear calls it.
torch::Tensor high_precision(Gemm role, const torch::Tensor& a, const torch::Tensor& b,
                             std::int64_t rows, std::int64_t cols) {
  torch::Tensor out = torch::empty({rows, cols}, torch::kFloat);
  SimBackend().high_precision_gemm(
      role, view(a), view(b), HighPrecision::fp32,
      {{out.mutable_data_ptr<float>(), static_cast<std::size_t>(out.numel())}, rows, cols});
  return out;
}

recipes::Recipe mxfp8() { return test::recipe_with_defaults(recipes::Scaling::mxfp8); }

}  // namespace

TEST_CASE("mx_2d: the weight codes of fprop and dgrad are one 32 x 32-tile quantization",
          "[linear][mx_2d]") {
  recipes::Recipe r = mxfp8();
  r.mx_2d = true;
  auto backend = std::make_shared<RecordingBackend>();
  const Step s = run_step(r, backend);
  const auto& calls = backend->calls;
  REQUIRE(calls.size() == 6);  // x, W for fprop; W (from forward), dY for dgrad; x, dY for wgrad
  const std::vector<float> w(s.w.data_ptr<float>(), s.w.data_ptr<float>() + s.w.numel());
  const auto tiles = sc::quantize_mx_2d(w, N, K, sim::Format::E4M3);
  const Recorded& w_fprop = find(calls, Operand::kWeight, Gemm::kFprop);
  const Recorded& w_dgrad = find(calls, Operand::kWeight, Gemm::kDgrad);
  CHECK(compare(w_fprop.q, tiles.tensor) == "");
  CHECK(compare(w_dgrad.q, tiles.tensor) == "");
  CHECK(w_fprop.q.block_rows == 32);
  CHECK(w_fprop.q.block_cols == 32);
  // The 1-D copies differ from the tiles on these tensors (an outlier sets one tile's scale), so
  // the checks above tell 2-D from 1-D.
  const auto rows = sc::quantize_mx(w, N, K, sc::ScaleAxis::kRowwise, sim::Format::E4M3);
  CHECK(compare(rows.tensor, tiles.tensor) != "");
  // The other operands keep their 1-D blocks.
  CHECK(find(calls, Operand::kInput, Gemm::kFprop).q.block_cols == 32);
  CHECK(find(calls, Operand::kInput, Gemm::kFprop).q.block_rows == 1);
  CHECK(find(calls, Operand::kGradOutput, Gemm::kWgrad).q.block_rows == 32);
  CHECK(find(calls, Operand::kGradOutput, Gemm::kWgrad).q.block_cols == 1);
  // y is the recipe's GEMM of the fprop operands, the tiles as its weight.
  sim::GemmOptions o;
  o.accumulation = r.gemm.fprop;
  const Recorded& x_fprop = find(calls, Operand::kInput, Gemm::kFprop);
  const auto y =
      sim::gemm({x_fprop.q, sim::ReduceDim::kCols}, {tiles.tensor, sim::ReduceDim::kCols}, o);
  CHECK(test::bitwise_difference(s.y.detach(), as_tensor(y, M, N)) == "");
}

TEST_CASE("backward_override dequantized: dgrad and wgrad in high precision on the forward's "
          "codes, dequantized",
          "[linear][backward_override]") {
  for (const recipes::Scaling scaling :
       {recipes::Scaling::current, recipes::Scaling::mxfp8, recipes::Scaling::block}) {
    INFO(recipes::name(scaling));
    recipes::Recipe r = test::recipe_with_defaults(scaling);
    r.backward_override = recipes::BackwardOverride::kDequantized;
    if (scaling == recipes::Scaling::mxfp8) r.mx_2d = true;  // the dgrad weight is the tiles
    auto backend = std::make_shared<RecordingBackend>();
    const Step s = run_step(r, backend);
    const auto& calls = backend->calls;
    REQUIRE(calls.size() == 2);  // the fprop GEMM's x and W only: dY is never quantized
    const Recorded& qx = find(calls, Operand::kInput, Gemm::kFprop);
    const Recorded& qw = find(calls, Operand::kWeight, Gemm::kFprop);
    const torch::Tensor x_hat = as_tensor(sc::dequantize(qx.q), M, K);
    const torch::Tensor w_hat = as_tensor(sc::dequantize(qw.q), N, K);
    const torch::Tensor g = s.g.contiguous();
    CHECK(test::bitwise_difference(s.dx, high_precision(Gemm::kDgrad, g, w_hat, M, K)) == "");
    CHECK(test::bitwise_difference(s.dw, high_precision(Gemm::kWgrad, g, x_hat, N, K)) == "");
    // Not the unquantized operands' GEMMs (high_precision's): the codes are really read.
    CHECK(test::bitwise_difference(s.dx, high_precision(Gemm::kDgrad, g, s.w, M, K)) != "");
    CHECK(test::bitwise_difference(s.dw, high_precision(Gemm::kWgrad, g, s.x, N, K)) != "");
  }
}

TEST_CASE("backward_override high_precision gives override_linear_precision [false, true, true]'s "
          "bits",
          "[linear][backward_override]") {
  recipes::Recipe spelled = mxfp8();
  spelled.backward_override = recipes::BackwardOverride::kHighPrecision;
  recipes::Recipe overridden = mxfp8();
  overridden.override_linear_precision = {false, true, true};
  auto a = std::make_shared<RecordingBackend>();
  auto b = std::make_shared<RecordingBackend>();
  const Step sa = run_step(spelled, a);
  const Step sb = run_step(overridden, b);
  CHECK(a->calls.size() == 2);
  CHECK(b->calls.size() == 2);
  CHECK(test::bitwise_difference(sa.y, sb.y) == "");
  CHECK(test::bitwise_difference(sa.dx, sb.dx) == "");
  CHECK(test::bitwise_difference(sa.dw, sb.dw) == "");
  CHECK(test::bitwise_difference(sa.dw, high_precision(Gemm::kWgrad, sa.g, sa.x, N, K)) == "");
}

TEST_CASE("quantizes_alike: one quantization for both GEMMs of a per-tensor operand gives the "
          "bits of one quantization per GEMM",
          "[linear][quantizes_alike]") {
  using recipes::Scaling;
  struct Case {
    Scaling scaling;
    bool per_tensor;
  };
  for (const Case c :
       {Case{Scaling::delayed, true}, Case{Scaling::current, true}, Case{Scaling::tensorwise, true},
        Case{Scaling::rowwise, false}, Case{Scaling::block, false}, Case{Scaling::mxfp8, false}}) {
    INFO(recipes::name(c.scaling));
    const recipes::Recipe r = test::recipe_with_defaults(c.scaling);
    // The RecordingBackend quantizes every operand for each GEMM (LinearBackend's default
    // quantizes_alike); the SimBackend takes a per-tensor operand's first quantization twice.
    auto each = std::make_shared<RecordingBackend>();
    auto once = std::make_shared<SimBackend>();
    const torch::Tensor w = test::normal({N, K}, 12, 0.1);
    Fp8Linear a(Fp8LinearImpl(w.clone().requires_grad_(true), torch::Tensor(), r, each,
                              HighPrecision::fp32, "layer"));
    Fp8Linear b(Fp8LinearImpl(w.clone().requires_grad_(true), torch::Tensor(), r, once,
                              HighPrecision::fp32, "layer"));
    // Three steps: delayed scaling's scales come from the amaxes the earlier steps recorded.
    for (std::uint64_t step = 0; step < 3; ++step) {
      INFO("step " << step);
      const torch::Tensor x = test::normal({M, K}, 20 + step, 1.0 + static_cast<double>(step));
      const torch::Tensor g = test::normal({M, N}, 30 + step, 0.01);
      torch::Tensor y[2], dx[2];
      Fp8Linear* layers[2] = {&a, &b};
      for (int i = 0; i < 2; ++i) {
        (*layers[i])->zero_grad();
        const torch::Tensor xv = x.clone().requires_grad_(true);
        {
          Fp8Autocast fp8(true);
          y[i] = (*layers[i])->forward(xv);
        }
        y[i].backward(g);
        dx[i] = xv.grad();
      }
      CHECK(test::bitwise_difference(y[1].detach(), y[0].detach()) == "");
      CHECK(test::bitwise_difference(dx[1], dx[0]) == "");
      CHECK(test::bitwise_difference(b->weight.grad(), a->weight.grad()) == "");
    }
    REQUIRE(each->calls.size() == 18);  // six quantizations a step
    struct Pair {
      Operand tensor;
      Gemm first, second;
    };
    for (const Pair p : {Pair{Operand::kInput, Gemm::kFprop, Gemm::kWgrad},
                         Pair{Operand::kWeight, Gemm::kFprop, Gemm::kDgrad},
                         Pair{Operand::kGradOutput, Gemm::kDgrad, Gemm::kWgrad}}) {
      INFO(name(p.tensor));
      CHECK(once->quantizes_alike(b->scaling_state(), p.tensor, p.first, p.second) == c.per_tensor);
      // Where it says alike, quantizing for each GEMM gave the same codes (the first step's);
      // where not, they differ on these tensors (so the bit checks above can tell), but for
      // block's weight: 128 x 128 tiles for both GEMMs, the same codes, which quantizes_alike
      // (per-tensor scalings only) does not take.
      const bool same = compare(find(each->calls, p.tensor, p.second).q,
                                find(each->calls, p.tensor, p.first).q) == "";
      if (c.scaling != Scaling::block || p.tensor != Operand::kWeight) {
        CHECK(same == c.per_tensor);
      }
    }
    if (c.scaling == Scaling::delayed) {
      const auto* da = SimBackend::delayed_state(a->scaling_state());
      const auto* db = SimBackend::delayed_state(b->scaling_state());
      REQUIRE(da != nullptr);
      REQUIRE(db != nullptr);
      for (std::int64_t slot = 0; slot < 2; ++slot) {
        CHECK(db->forward().history_of(slot) == da->forward().history_of(slot));
        CHECK(db->forward().scale(slot) == da->forward().scale(slot));
      }
      CHECK(db->backward().history_of(0) == da->backward().history_of(0));
      CHECK(db->backward().scale(0) == da->backward().scale(0));
    }
  }
}

}  // namespace fp8lab::experiments
