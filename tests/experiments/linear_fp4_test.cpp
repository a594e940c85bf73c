// FP4/FP6 recipes in the Linear (docs/fp4.md, "Training"): the operands an Fp8Linear quantizes
// under NVFP4 (TE's recipe parts: 16 x 16 weight tiles, the RHT on the wgrad operands, stochastic
// rounding of the gradient), MXFP4 and MXFP6 are, byte for byte, what sim's quantizers give for
// the same tensors, called directly here rather than through the lowering; and the layer's output
// and weight gradient are the GEMM model of those operands (blackwell_block, or fp32_seq).
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2
#include "recording_backend.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "recipes/lowering.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/mx_dither.hpp"
#include "sim/scaling/nvfp4.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;
using test::compare;
using test::Recorded;
using test::RecordingBackend;
constexpr std::int64_t M = 64, K = 64, N = 32;  // tokens, in_features, out_features

struct Step {
  torch::Tensor x, w, g, y, dw;
};

// One forward and backward of a bias-free Linear [N, K] on x [M, K] with upstream gradient g.
Step run_step(const recipes::Recipe& recipe, const std::shared_ptr<RecordingBackend>& backend) {
  Step s;
  s.x = test::normal({M, K}, 1);
  s.w = test::normal({N, K}, 2, 0.1);
  s.g = test::normal({M, N}, 3, 0.01);
  // Outliers in a few blocks, so that per-block scales matter.
  s.x.index_put_({5, 7}, 40.0f);
  s.g.index_put_({17, 3}, -2.0f);
  Fp8Linear layer(Fp8LinearImpl(s.w.clone().requires_grad_(true), torch::Tensor(), recipe, backend,
                                HighPrecision::fp32, "layer"));
  {
    Fp8Autocast fp8(true);
    s.y = layer->forward(s.x.clone().requires_grad_(true));  // with dX: all three GEMMs run
  }
  s.y.backward(s.g);
  s.dw = layer->weight.grad();
  return s;
}

std::vector<float> rht(const std::vector<float>& x, std::int64_t rows, std::int64_t cols) {
  std::vector<float> y(x.size());
  sim::random_hadamard_transform_bf16(x, rows, cols, sim::RhtAxis::kRows, sim::kTeRhtSignMask, y);
  return y;
}

// The Philox key SimBackend's stochastic rounding must draw for call k of `tensor` in GEMM `role`
// of the Linear with ordinal n under `run_seed` (sim_backend.hpp, stochastic_stream), written out
// here so that a change of the mapping fails these tests.
sc::StochasticStream sr_key(std::uint64_t run_seed, std::uint64_t n, Operand tensor, Gemm role,
                            std::uint64_t k) {
  const auto slot =
      static_cast<std::uint64_t>(3 * static_cast<int>(role) + static_cast<int>(tensor));
  return {run_seed, n * (std::uint64_t{1} << 36) + slot * (std::uint64_t{1} << 32) + k};
}

torch::Tensor as_tensor(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return torch::from_blob(const_cast<float*>(v.data()), {rows, cols}, torch::kFloat).clone();
}

// The Linear's GEMM of two recorded operands, as gemm.hpp's table reads them.
torch::Tensor gemm_of(const Recorded& a, sim::ReduceDim ka, const Recorded& b, sim::ReduceDim kb,
                      recipes::Accumulation accumulation) {
  sim::GemmOptions o;
  o.accumulation = accumulation;
  const auto out = sim::gemm({a.q, ka}, {b.q, kb}, o);
  const auto shape = sim::gemm_shape({a.q, ka}, {b.q, kb});
  return as_tensor(out, shape.m, shape.n);
}

const Recorded& find(const std::vector<Recorded>& calls, Operand tensor, Gemm role) {
  for (const auto& c : calls)
    if (c.tensor == tensor && c.role == role) return c;
  FAIL("no quantize call for " << name(tensor) << " of " << name(role));
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("An NVFP4 Linear quantizes as TE's recipe says: 2-D weights, RHT wgrad operands, "
          "stochastically rounded gradients",
          "[linear][fp4]") {
  recipes::Recipe r = test::recipe_with_defaults(recipes::Scaling::nvfp4);
  r.nvfp4_2d = true;
  r.nvfp4_rht = true;
  r.nvfp4_stochastic_rounding = true;
  REQUIRE(r.gemm.fprop == recipes::Accumulation::kBlackwellBlock);
  auto backend = std::make_shared<RecordingBackend>();
  const Step s = run_step(r, backend);
  const auto& calls = backend->calls;
  REQUIRE(calls.size() == 6);  // x, W for fprop; dY, W for dgrad; dY, x for wgrad

  for (const Recorded& c : calls) {
    INFO(name(c.tensor) << " of " << name(c.role));
    const bool wgrad_rht = c.role == Gemm::kWgrad && c.tensor != Operand::kWeight;
    const std::vector<float> in = wgrad_rht ? rht(c.x, c.rows, c.cols) : c.x;
    const sc::BlockShape block = c.tensor == Operand::kWeight ? sc::BlockShape{16, 16}
                                 : c.role == Gemm::kWgrad     ? sc::BlockShape{16, 1}
                                                              : sc::BlockShape{1, 16};
    std::optional<sc::StochasticStream> stream;
    if (c.tensor == Operand::kGradOutput) stream = sr_key(0, 0, c.tensor, c.role, 0);
    const auto want = sc::quantize_nvfp4(in, c.rows, c.cols, block, sc::Nvfp4Mode::kTe,
                                         stream ? &*stream : nullptr);
    CHECK(compare(c.q, want.tensor) == "");
    CHECK(c.q.rht == wgrad_rht);
    if (stream) {
      // The stochastic codes differ from round-to-nearest somewhere: SR is really on.
      const auto nearest = sc::quantize_nvfp4(in, c.rows, c.cols, block, sc::Nvfp4Mode::kTe);
      CHECK(nearest.tensor.data != c.q.data);
    }
  }
  // y = the block-scaled GEMM of the fprop operands; dW = that of the (RHT) wgrad operands.
  const auto y = gemm_of(find(calls, Operand::kInput, Gemm::kFprop), sim::ReduceDim::kCols,
                         find(calls, Operand::kWeight, Gemm::kFprop), sim::ReduceDim::kCols,
                         recipes::Accumulation::kBlackwellBlock);
  CHECK(test::bitwise_difference(s.y.detach(), y) == "");
  const auto dw = gemm_of(find(calls, Operand::kGradOutput, Gemm::kWgrad), sim::ReduceDim::kRows,
                          find(calls, Operand::kInput, Gemm::kWgrad), sim::ReduceDim::kRows,
                          recipes::Accumulation::kBlackwellBlock);
  CHECK(test::bitwise_difference(s.dw, dw) == "");
  // Both wgrad operands transformed: M Mᵀ = I, so dW stays near gᵀx (one operand alone would not:
  // its error would be of the size of dW itself).
  const auto exact = s.g.t().matmul(s.x);
  const double relative = ((s.dw - exact).norm() / exact.norm()).item<double>();
  INFO("relative Frobenius error of dW against g^T x: " << relative);
  CHECK(relative < 0.3);
}

TEST_CASE("MXFP4, MXFP6 and torchao NVFP4 Linears quantize as sim's quantizers, and their GEMMs "
          "are the recipe's model",
          "[linear][fp4]") {
  struct Case {
    recipes::Scaling scaling;
    recipes::Accumulation gemm;
  };
  for (const Case& k : {Case{recipes::Scaling::mxfp4, recipes::Accumulation::kBlackwellBlock},
                        Case{recipes::Scaling::mxfp6_e2m3, recipes::Accumulation::kFp32Seq},
                        Case{recipes::Scaling::mxfp6_e3m2, recipes::Accumulation::kBlackwellBlock},
                        Case{recipes::Scaling::nvfp4, recipes::Accumulation::kFp32Seq}}) {
    recipes::Recipe r = test::recipe_with_defaults(k.scaling);
    r.gemm = {k.gemm, k.gemm, k.gemm};
    if (k.scaling == recipes::Scaling::nvfp4)
      r.nvfp4_mode = sc::Nvfp4Mode::kTorchao;
    else
      r.mx_scale_mode = sc::E8M0Mode::kRceil;
    INFO(recipes::name(k.scaling) << " with " << recipes::name(k.gemm));
    auto backend = std::make_shared<RecordingBackend>();
    const Step s = run_step(r, backend);
    REQUIRE(backend->calls.size() == 6);
    const sim::Format format = *recipes::subbyte_element_format(k.scaling);
    for (const Recorded& c : backend->calls) {
      INFO(name(c.tensor) << " of " << name(c.role));
      const sc::ScaleAxis axis = sc::scale_axis(c.role, c.tensor);
      const auto want = k.scaling == recipes::Scaling::nvfp4
                            ? sc::quantize_nvfp4(c.x, c.rows, c.cols,
                                                 axis == sc::ScaleAxis::kRowwise
                                                     ? sc::BlockShape{1, 16}
                                                     : sc::BlockShape{16, 1},
                                                 sc::Nvfp4Mode::kTorchao)
                            : sc::quantize_mx(c.x, c.rows, c.cols, axis, format,
                                              sc::E8M0Mode::kRceil, sc::TorchaoVersion::kV0_18);
      CHECK(compare(c.q, want.tensor) == "");
    }
    const auto y = gemm_of(
        find(backend->calls, Operand::kInput, Gemm::kFprop), sim::ReduceDim::kCols,
        find(backend->calls, Operand::kWeight, Gemm::kFprop), sim::ReduceDim::kCols, k.gemm);
    CHECK(test::bitwise_difference(s.y.detach(), y) == "");
    // And near the fp32 product: the format's error, not a misrouted operand.
    const auto exact = s.x.matmul(s.w.t());
    const double relative = ((s.y.detach() - exact).norm() / exact.norm()).item<double>();
    INFO("relative Frobenius error of y: " << relative);
    CHECK(relative < 0.3);
  }
}

TEST_CASE("Stochastic rounding in training is reproducible and draws a new stream per call",
          "[linear][fp4]") {
  recipes::Recipe r = test::recipe_with_defaults(recipes::Scaling::nvfp4);
  r.nvfp4_stochastic_rounding = true;
  auto a = std::make_shared<RecordingBackend>(), b = std::make_shared<RecordingBackend>();
  const Step sa = run_step(r, a), sb = run_step(r, b);
  CHECK(test::bitwise_difference(sa.dw, sb.dw) == "");
  const auto& dgrad = find(a->calls, Operand::kGradOutput, Gemm::kDgrad);
  const auto& wgrad = find(a->calls, Operand::kGradOutput, Gemm::kWgrad);
  // The same tensor in the two GEMMs (its row- and columnwise copies), each with its GEMM's key.
  const auto with = [&](const sc::StochasticStream& st, sc::BlockShape block) {
    return sc::quantize_nvfp4(dgrad.x, M, N, block, sc::Nvfp4Mode::kTe, &st).tensor;
  };
  CHECK(compare(dgrad.q, with(sr_key(0, 0, Operand::kGradOutput, Gemm::kDgrad, 0), {1, 16})) == "");
  CHECK(compare(wgrad.q, with(sr_key(0, 0, Operand::kGradOutput, Gemm::kWgrad, 0), {16, 1})) == "");
}

TEST_CASE("Stochastic rounding's draws are keyed by the run's seed, the Linear, the operand and "
          "the call",
          "[linear][fp4]") {
  // Before the run's seed keyed them, seeds 0, 1 and 2 of a sweep drew the same streams: the
  // first two checks below failed (the seed was the Linear's ordinal).
  const std::vector<float> g = [] {
    const torch::Tensor t = test::normal({M, N}, 3, 0.01).contiguous();
    return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }();
  struct Case {
    const char* what;
    recipes::Recipe recipe;
  };
  recipes::Recipe nvfp4 = test::recipe_with_defaults(recipes::Scaling::nvfp4);
  nvfp4.nvfp4_stochastic_rounding = true;
  recipes::Recipe mxfp4 = test::recipe_with_defaults(recipes::Scaling::mxfp4);
  mxfp4.mx_scale_mode = sc::E8M0Mode::kFloor;
  mxfp4.mx_stochastic_rounding = true;
  for (const Case& k : {Case{"nvfp4 te sr", nvfp4}, Case{"mxfp4 mx_stochastic_rounding", mxfp4}}) {
    INFO(k.what);
    // The codes of the `call`-th dgrad quantization of dY by the `linear`-th Linear of a backend
    // under run seed `seed`.
    const auto codes = [&](std::uint64_t seed, int linear, int call) {
      const SimBackend backend(SimBackendOptions{.threads = 1, .run_seed = seed});
      std::unique_ptr<LinearScalingState> state;
      for (int i = 0; i <= linear; ++i) state = backend.make_state(k.recipe);
      sim::QuantizedTensor q;
      for (int i = 0; i <= call; ++i)
        q = backend.quantize(*state, Operand::kGradOutput, Gemm::kDgrad, {g, M, N}).tensor;
      return q;
    };
    const sim::QuantizedTensor seed0 = codes(0, 0, 0);
    CHECK(compare(codes(1, 0, 0), seed0) != "");  // another seed: other bits, same Linear
    CHECK(compare(codes(2, 0, 0), codes(1, 0, 0)) != "");
    CHECK(compare(codes(0, 0, 0), seed0) == "");  // the same seed twice: the same bits
    CHECK(compare(codes(0, 1, 0), seed0) != "");  // another Linear of the run
    CHECK(compare(codes(0, 0, 1), seed0) != "");  // the next call
    // And each is the quantizer under the documented key.
    const sc::QuantizePlan plan = recipes::plan(k.recipe, Operand::kGradOutput, Gemm::kDgrad);
    for (const std::uint64_t seed : {0, 1, 7}) {
      for (const int linear : {0, 2}) {
        for (const int call : {0, 3}) {
          INFO("seed " << seed << ", Linear " << linear << ", call " << call);
          const sc::StochasticStream key = sr_key(seed, static_cast<std::uint64_t>(linear),
                                                  Operand::kGradOutput, Gemm::kDgrad,
                                                  static_cast<std::uint64_t>(call));
          CHECK(compare(codes(seed, linear, call), sc::quantize(plan, g, M, N, 1, &key).tensor) ==
                "");
        }
      }
    }
  }
  // The key's fields stay in their bits: a Linear ordinal or call count past them is refused.
  CHECK_THROWS_AS(
      stochastic_stream(0, std::uint64_t{1} << 27, Operand::kGradOutput, Gemm::kWgrad, 0),
      std::length_error);
  CHECK_THROWS_AS(
      stochastic_stream(0, 0, Operand::kGradOutput, Gemm::kWgrad, std::uint64_t{1} << 32),
      std::length_error);
}

TEST_CASE("Tseng et al.'s MXFP4 backward: one sign draw per backward GEMM, shared by its two "
          "operands, and dW is the GEMM of the transformed, dithered operands",
          "[linear][fp4]") {
  recipes::Recipe r = test::recipe_with_defaults(recipes::Scaling::mxfp4);
  r.mx_scale_mode = sc::E8M0Mode::kFloor;
  r.mx_stochastic_rounding = r.mx_rht = true;
  r.override_linear_precision = {true, false, false};
  r.gemm = {recipes::Accumulation::kFp32Seq, recipes::Accumulation::kFp32Seq,
            recipes::Accumulation::kFp32Seq};
  constexpr std::int64_t n = 64;  // out_features: dgrad's K, a multiple of the 64-point RHT
  const auto run = [&](const std::shared_ptr<RecordingBackend>& backend) {
    const torch::Tensor x = test::normal({M, K}, 1), w = test::normal({n, K}, 2, 0.1),
                        g = test::normal({M, n}, 3, 0.01);
    Fp8Linear layer(Fp8LinearImpl(w.clone().requires_grad_(true), torch::Tensor(), r, backend,
                                  HighPrecision::fp32, "layer"));
    torch::Tensor y;
    {
      Fp8Autocast fp8(true);
      y = layer->forward(x.clone().requires_grad_(true));
    }
    y.backward(g);
    return layer->weight.grad().clone();
  };
  auto a = std::make_shared<RecordingBackend>(), b = std::make_shared<RecordingBackend>();
  const torch::Tensor dw = run(a);
  CHECK(test::bitwise_difference(dw, run(b)) == "");  // reproducible
  const auto& dgrad_w = find(a->calls, Operand::kWeight, Gemm::kDgrad);
  const auto& dgrad_g = find(a->calls, Operand::kGradOutput, Gemm::kDgrad);
  const auto& wgrad_x = find(a->calls, Operand::kInput, Gemm::kWgrad);
  const auto& wgrad_g = find(a->calls, Operand::kGradOutput, Gemm::kWgrad);
  // The first draw of each GEMM of the backend's first Linear, under run seed 0.
  const std::uint64_t dgrad_signs = sc::mx_rht_sign_mask(0, (std::uint64_t{1} << 63) + 0, 0);
  const std::uint64_t wgrad_signs = sc::mx_rht_sign_mask(0, (std::uint64_t{1} << 63) + 1, 0);
  CHECK(dgrad_w.q.rht_signs == dgrad_signs);
  CHECK(dgrad_g.q.rht_signs == dgrad_signs);
  CHECK(wgrad_x.q.rht_signs == wgrad_signs);
  CHECK(wgrad_g.q.rht_signs == wgrad_signs);
  CHECK(dgrad_signs != wgrad_signs);
  // Each operand is the transform along its K, then dither_scale (its key: the first call of that
  // operand in that GEMM of the backend's first Linear, under run seed 0).
  for (const Recorded& c : a->calls) {
    const sc::QuantizePlan p = recipes::plan(r, c.tensor, c.role);
    REQUIRE(p.rht);
    std::vector<float> t(c.x.size());
    sc::mx_rht_bf16(c.x, c.rows, c.cols, p.axis, c.q.rht_signs, t);
    const sc::StochasticStream stream = sr_key(0, 0, c.tensor, c.role, 0);
    CHECK(compare(c.q, sc::quantize_mx_dither_scale(t, c.rows, c.cols, p.axis, stream).tensor) ==
          "");
  }
  // dW = (S dY)^T (S X) in the GEMM model: the recorded operands' GEMM, bit for bit.
  const torch::Tensor want = gemm_of(wgrad_g, sim::ReduceDim::kRows, wgrad_x, sim::ReduceDim::kRows,
                                     recipes::Accumulation::kFp32Seq);
  CHECK(test::bitwise_difference(dw, want) == "");
}

TEST_CASE("The Hopper models refuse FP4 operands and name the models that take them",
          "[linear][fp4]") {
  sim::QuantizedTensor a =
      sc::quantize_nvfp4(std::vector<float>(64, 1.0f), 4, 16, {1, 16}, sc::Nvfp4Mode::kTe).tensor;
  sim::GemmOptions o;
  o.accumulation = recipes::Accumulation::kHopperSplitAccumulator;
  CHECK_THROWS_WITH(sim::gemm({a, sim::ReduceDim::kCols}, {a, sim::ReduceDim::kCols}, o),
                    Catch::Contains("accepted for them: fp32_seq, exact, blackwell_block"));
}

}  // namespace fp8lab::experiments
