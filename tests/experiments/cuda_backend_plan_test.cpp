// The cuda backend's choices, checked without a GPU: for every stateless recipe, Linear tensor and
// GEMM role, the lowering's plan (recipes::plan), which CudaBackend executes, run through gpu/'s
// host twins (gpu::scaling::host_twin::quantize: the kernels' per-block code compiled for the
// host) gives SimBackend::quantize's bits (codes, scales, scale_inv, E8M0, statistics, block
// shape); and each GEMM role's K layout (sim/settings.hpp's k_is_cols) and accumulation model
// through the GEMM host twin gives SimBackend::gemm's and high_precision_gemm's bits; mx_2d's
// weight plans give the 32 x 32 tiles; gpu::dequantize's host twin gives sim::scaling::dequantize's
// bits on every plan's codes, and backward_override dequantized chained as CudaBackend chains it
// gives the sim backend's trained Linear. What this cannot see (device memory, the kernels' launch
// and delayed scaling's device state) is cuda_backend_equality_test's, on a GPU.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda_backend_test_support.hpp"
#include "experiments/gpu_check/check_inputs.hpp"
#include "experiments/linear/autocast.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "gpu/dequantize.hpp"
#include "gpu/gemm/gemm.hpp"
#include "gpu/scaling/blocked.hpp"
#include "recipes/lowering.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

using recipes::Scaling;
using test::NamedRecipe;

std::vector<NamedRecipe> stateless_recipes() {
  std::vector<NamedRecipe> list;
  for (const Scaling s : {Scaling::current, Scaling::tensorwise, Scaling::rowwise,
                          Scaling::rowwise_with_gw_hp, Scaling::block}) {
    for (const bool pow2 : {false, true}) {
      recipes::Recipe r = test::recipe_with_defaults(s);
      r.power_2_scales = pow2;
      list.push_back({std::string(recipes::name(s)) + (pow2 ? " pow2" : ""), r});
    }
  }
  for (const auto mode :
       {recipes::E8M0Mode::kTe, recipes::E8M0Mode::kFloor, recipes::E8M0Mode::kCeil,
        recipes::E8M0Mode::kEven, recipes::E8M0Mode::kRceil}) {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::mxfp8);
    r.mx_scale_mode = mode;
    list.push_back({"mxfp8 " + std::string(recipes::name(mode)), r});  // torchao-0.18
    if (recipes::uses_torchao_version(r)) {
      r.torchao_version = recipes::TorchaoVersion::kMain;
      list.push_back({"mxfp8 " + std::string(recipes::name(mode)) + " torchao-main", r});
    }
  }
  // TE's MXFP8 2-D weights (mx_2d): the weight's fprop and dgrad plans in 32 x 32 tiles.
  for (const auto mode : {recipes::E8M0Mode::kTe, recipes::E8M0Mode::kRceil}) {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::mxfp8);
    r.mx_scale_mode = mode;
    r.mx_2d = true;
    list.push_back({"mxfp8 " + std::string(recipes::name(mode)) + " mx_2d", r});
  }
  for (const auto format : {recipes::Fp8Format::kE4M3, recipes::Fp8Format::kE5M2}) {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::current);
    r.fp8_format = format;
    list.push_back({"current " + std::string(recipes::name(format)), r});
  }
  // Static scaling (QuantizeKind::kStatic): unit scale, and a scale at which small values
  // underflow and the specials' huge values saturate.
  for (const double scale : {1.0, 0.0625}) {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::static_);
    r.static_scale = scale;
    list.push_back({"static " + std::to_string(scale), r});
  }
  return list;
}

// Activations over a few binades with rare specials (NaN, ±Inf, zeros, denormals, huge values).
std::vector<float> input(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = std::ldexp(normal(rng), static_cast<int>(rng() % 6) - 3);
  if (seed % 2 == 1) gpu_check::scatter_specials(x, rng, n / 301 + 1, 1e30f, -3e-30f);
  return x;
}

std::string bits(float f) {
  char text[48];
  std::snprintf(text, sizeof text, "0x%08X (%.9g)", test::bits_of(f), static_cast<double>(f));
  return text;
}

void check_same(const sim::scaling::QuantizeResult& got, const sim::scaling::QuantizeResult& want,
                const std::vector<float>& x) {
  const sim::QuantizedTensor& g = got.tensor;
  const sim::QuantizedTensor& w = want.tensor;
  REQUIRE(g.block_rows == w.block_rows);
  REQUIRE(g.block_cols == w.block_cols);
  REQUIRE(g.format == w.format);
  REQUIRE(g.data.size() == w.data.size());
  for (std::size_t i = 0; i < g.data.size(); ++i) {
    if (g.data[i] != w.data[i]) {
      FAIL_CHECK("code[" << i << "]: x = " << bits(x[i]) << ", plan 0x" << std::hex
                         << int{g.data[i]} << ", sim 0x" << int{w.data[i]});
      break;
    }
  }
  REQUIRE(g.scale_inv.size() == w.scale_inv.size());
  REQUIRE(g.scale.size() == w.scale.size());
  REQUIRE(g.scale_e8m0 == w.scale_e8m0);
  for (std::size_t b = 0; b < g.scale_inv.size(); ++b) {
    if (test::bits_of(g.scale_inv[b]) != test::bits_of(w.scale_inv[b]) ||
        test::bits_of(g.scale[b]) != test::bits_of(w.scale[b])) {
      FAIL_CHECK("block " << b << ": scale_inv plan " << bits(g.scale_inv[b]) << ", sim "
                          << bits(w.scale_inv[b]) << "; scale plan " << bits(g.scale[b]) << ", sim "
                          << bits(w.scale[b]));
      break;
    }
  }
  CHECK(bits(got.stats.amax) == bits(want.stats.amax));
  CHECK(got.stats.count == want.stats.count);
  CHECK(got.stats.saturated == want.stats.saturated);
  CHECK(got.stats.underflowed == want.stats.underflowed);
  CHECK(got.stats.nan == want.stats.nan);
}

// gpu::dequantize's host twin on t equals sim::scaling::dequantize(t): every value's bits, a NaN
// as any NaN (gpu/dequantize.hpp's contract); fails unless some value is nonzero.
void check_dequantize(const sim::QuantizedTensor& t) {
  const std::vector<float> want = sim::scaling::dequantize(t);
  std::vector<float> got(want.size());
  gpu::host_twin::dequantize({t.data.data(), t.scale_inv.data(), t.rows, t.cols, t.block_rows,
                              t.block_cols, t.format, true},
                             got.data());
  bool nonzero = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    nonzero = nonzero || want[i] != 0.0f;
    const bool same = std::isnan(want[i]) ? std::isnan(got[i])
                                          : test::bits_of(got[i]) == test::bits_of(want[i]);
    if (!same) {
      FAIL_CHECK("dequantized[" << i << "]: host twin " << bits(got[i]) << ", sim "
                                << bits(want[i]));
      return;
    }
  }
  CHECK((nonzero || t.rows * t.cols == 1));
}

// The plan run through the host twins, assembled as CudaBackend assembles the device result.
sim::scaling::QuantizeResult run_on_host(const sim::scaling::QuantizePlan& plan,
                                         const std::vector<float>& x, std::int64_t rows,
                                         std::int64_t cols) {
  const sim::scaling::BlockShape b = plan.blocks(rows, cols);
  const auto blocks =
      static_cast<std::size_t>(((rows + b.rows - 1) / b.rows) * ((cols + b.cols - 1) / b.cols));
  sim::scaling::QuantizeResult r;
  sim::QuantizedTensor& t = r.tensor;
  t.rows = rows;
  t.cols = cols;
  t.format = plan.format;
  t.block_rows = b.rows;
  t.block_cols = b.cols;
  t.data.resize(x.size());
  t.scale_inv.resize(blocks);
  t.scale.resize(blocks);
  std::vector<std::uint8_t> e8m0(blocks);
  gpu::DeviceQuantizeStats stats{};
  gpu::scaling::host_twin::quantize(
      plan, x.data(), rows, cols,
      {t.data.data(), t.scale_inv.data(), t.scale.data(), e8m0.data(), &stats});
  if (plan.stores_e8m0()) t.scale_e8m0 = e8m0;
  r.stats.amax = stats.amax;
  r.stats.count = stats.count;
  r.stats.saturated = stats.saturated;
  r.stats.underflowed = stats.underflowed;
  r.stats.nan = stats.nan;
  return r;
}

struct OperandUse {
  Operand tensor;
  Gemm role;
};
constexpr OperandUse kOperands[] = {
    {Operand::kInput, Gemm::kFprop},      {Operand::kWeight, Gemm::kFprop},
    {Operand::kGradOutput, Gemm::kDgrad}, {Operand::kWeight, Gemm::kDgrad},
    {Operand::kGradOutput, Gemm::kWgrad}, {Operand::kInput, Gemm::kWgrad}};

// Whether K is the stored columns of the GEMM's operands a and b.
std::pair<bool, bool> k_is_cols(Gemm role) {
  const sim::scaling::GemmOperands o = sim::scaling::gemm_operands(role);
  return {sim::scaling::k_is_cols(role, o.a), sim::scaling::k_is_cols(role, o.b)};
}

}  // namespace

TEST_CASE("cuda backend plan: every stateless quantize through the host twins equals SimBackend",
          "[cuda_backend]") {
  const SimBackend sim;
  struct Shape {
    std::int64_t rows, cols;
  };
  std::uint64_t seed = 1;
  std::int64_t compared = 0;
  for (const NamedRecipe& named : stateless_recipes()) {
    const auto state = sim.make_state(named.recipe);
    for (const OperandUse& op : kOperands) {
      for (const Shape s : {Shape{1, 1}, Shape{7, 33}, Shape{33, 130}, Shape{130, 257}}) {
        INFO(named.name << ", " << name(op.tensor) << " for " << name(op.role) << ", " << s.rows
                        << " x " << s.cols);
        const std::vector<float> x = input(static_cast<std::size_t>(s.rows * s.cols), seed++);
        const ConstMatrix m{x, s.rows, s.cols};
        const bool high_precision = named.recipe.scaling == Scaling::rowwise_with_gw_hp &&
                                    op.role == Gemm::kWgrad;
        if (high_precision) {
          CHECK_THROWS_AS(sim.quantize(*state, op.tensor, op.role, m), std::invalid_argument);
          const auto plan = recipes::plan(named.recipe, op.tensor, op.role);
          CHECK(plan.kind == sim::scaling::QuantizeKind::kHighPrecision);
          CHECK_THROWS_WITH(run_on_host(plan, x, s.rows, s.cols),
                            Catch::Contains("high_precision plan"));
          continue;
        }
        const auto want = sim.quantize(*state, op.tensor, op.role, m);
        const auto plan = recipes::plan(named.recipe, op.tensor, op.role);
        check_same(run_on_host(plan, x, s.rows, s.cols), want, x);
        check_dequantize(want.tensor);
        ++compared;
      }
    }
  }
  // 25 recipes (10 current/torchao/block, mxfp8 te + 4 torchao modes x 2 torchao versions, 2
  // mx_2d, 2 current formats, 2 static scales) x 6 operands x 4 shapes, less
  // rowwise_with_gw_hp's 2 x 2 wgrad operands x 4.
  CHECK(compared == 25 * 6 * 4 - 2 * 2 * 4);
}

// mx_2d reaches the GPU plan: the weight's fprop and dgrad plans, run through the host twins, are
// one 32 x 32-tile quantization of W (sim::scaling::quantize_mx_2d, codes and E8M0 bytes), not the
// 1 x 32 copy, which differs on this W (an outlier sets one tile's scale); input and grad_output
// keep their 1-D blocks.
TEST_CASE("cuda backend plan: mx_2d's weight plans are the 32 x 32 tiles through the host twin",
          "[cuda_backend]") {
  constexpr std::int64_t N = 72, K = 160;  // partial tiles along both dimensions
  std::vector<float> w = input(N * K, 14);
  w[3 * K + 40] = 3000.0f;
  recipes::Recipe r = test::recipe_with_defaults(Scaling::mxfp8);
  r.mx_2d = true;
  const auto tiles = sim::scaling::quantize_mx_2d(w, N, K, sim::Format::E4M3);
  const auto rows =
      sim::scaling::quantize_mx(w, N, K, sim::scaling::ScaleAxis::kRowwise, sim::Format::E4M3);
  CHECK(rows.tensor.data != tiles.tensor.data);
  for (const Gemm role : {Gemm::kFprop, Gemm::kDgrad}) {
    INFO(name(role));
    const auto got = run_on_host(recipes::plan(r, Operand::kWeight, role), w, N, K);
    CHECK(got.tensor.block_rows == 32);
    CHECK(got.tensor.block_cols == 32);
    check_same(got, tiles, w);
  }
  CHECK(recipes::plan(r, Operand::kInput, Gemm::kFprop).blocks(N, K).rows == 1);
  CHECK(recipes::plan(r, Operand::kGradOutput, Gemm::kWgrad).blocks(N, K).cols == 1);
}

// backward_override dequantized as CudaBackend runs it (the fprop plans through the quantizer
// host twins, the codes through gpu::dequantize's host twin, then the high-precision GEMM's host
// twin with dY unquantized) gives the sim backend's trained Linear: y, dX and dW bit for bit. The
// device run of the same chain is cuda_backend_equality_test's.
TEST_CASE("cuda backend plan: backward_override dequantized through the host twins equals the "
          "sim backend's Linear",
          "[cuda_backend]") {
  constexpr std::int64_t M = 40, K = 160, N = 72;
  for (const Scaling scaling :
       {Scaling::current, Scaling::block, Scaling::mxfp8, Scaling::static_}) {
    recipes::Recipe r = test::recipe_with_defaults(scaling);
    r.backward_override = recipes::BackwardOverride::kDequantized;
    if (scaling == Scaling::mxfp8) r.mx_2d = true;
    if (scaling == Scaling::static_) r.static_scale = 0.0625;
    INFO(recipes::name(scaling));
    const torch::Tensor x = test::normal({M, K}, 31), w = test::normal({N, K}, 32, 0.1),
                        g = test::normal({M, N}, 33, 0.01);
    Fp8Linear layer(Fp8LinearImpl(w.clone().requires_grad_(true), torch::Tensor(), r,
                                  std::make_shared<const SimBackend>(), HighPrecision::fp32,
                                  "layer"));
    const torch::Tensor xv = x.clone().requires_grad_(true);
    torch::Tensor y;
    {
      Fp8Autocast fp8(true);
      y = layer->forward(xv);
    }
    y.backward(g);
    const auto values = [](const torch::Tensor& t) {
      return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    };
    const std::vector<float> xs = values(x), ws = values(w), gs = values(g);
    const auto qx = run_on_host(recipes::plan(r, Operand::kInput, Gemm::kFprop), xs, M, K).tensor;
    const auto qw = run_on_host(recipes::plan(r, Operand::kWeight, Gemm::kFprop), ws, N, K).tensor;
    const auto device_view = [](const sim::QuantizedTensor& t, bool k_cols) {
      return gpu::DeviceGemmOperand{t.data.data(), t.scale_inv.data(), t.rows,   t.cols,
                                    t.block_rows,  t.block_cols,       t.format, k_cols};
    };
    std::vector<float> y_twin(M * N), x_hat(M * K), w_hat(N * K), dx_twin(M * K), dw_twin(N * K);
    gpu::DeviceGemmOptions options;
    options.model = r.gemm.fprop;
    gpu::host_twin::gemm(device_view(qx, true), device_view(qw, true), options, y_twin.data());
    gpu::host_twin::dequantize(device_view(qx, true), x_hat.data());
    gpu::host_twin::dequantize(device_view(qw, true), w_hat.data());
    const auto dense = [](Gemm role, const std::vector<float>& a, std::int64_t a_rows,
                          std::int64_t a_cols, const std::vector<float>& b, std::int64_t b_rows,
                          std::int64_t b_cols, std::vector<float>& out) {
      const auto [a_k, b_k] = k_is_cols(role);
      gpu::host_twin::high_precision_gemm({a.data(), a_rows, a_cols, a_k},
                                          {b.data(), b_rows, b_cols, b_k}, {}, out.data());
    };
    dense(Gemm::kDgrad, gs, M, N, w_hat, N, K, dx_twin);
    dense(Gemm::kWgrad, gs, M, N, x_hat, M, K, dw_twin);
    const auto as_tensor = [](std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
      return torch::from_blob(v.data(), {rows, cols}, torch::kFloat).clone();
    };
    CHECK(test::bitwise_difference(y.detach(), as_tensor(y_twin, M, N)) == "");
    CHECK(test::bitwise_difference(xv.grad(), as_tensor(dx_twin, M, K)) == "");
    CHECK(test::bitwise_difference(layer->weight.grad(), as_tensor(dw_twin, N, K)) == "");
    // The dequantized codes, not the unquantized operands: dX differs from the GEMM of W itself.
    std::vector<float> dx_of_w(M * K);
    dense(Gemm::kDgrad, gs, M, N, ws, N, K, dx_of_w);
    CHECK(test::bitwise_difference(xv.grad(), as_tensor(dx_of_w, M, K)) != "");
  }
}

// recipe.torchao_version reaches both backends: an MXFP8 floor block of 2^-126 (scale byte 0) is
// 2.0 (0x40) at torchao main and 1.0 (0x38) at torchao 0.18 (its FLT_MIN clamp).
TEST_CASE("cuda backend plan: torchao_version reaches SimBackend and the GPU plan",
          "[cuda_backend]") {
  const SimBackend sim;
  const std::vector<float> x(32, std::ldexp(1.0f, -126));
  const ConstMatrix m{x, 1, 32};
  for (const auto version : {recipes::TorchaoVersion::kV0_18, recipes::TorchaoVersion::kMain}) {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::mxfp8);
    r.mx_scale_mode = recipes::E8M0Mode::kFloor;
    r.torchao_version = version;
    INFO(recipes::name(version));
    const auto want = sim.quantize(*sim.make_state(r), Operand::kInput, Gemm::kFprop, m);
    const std::uint8_t code = version == recipes::TorchaoVersion::kV0_18 ? 0x38 : 0x40;
    CHECK(want.tensor.data == std::vector<std::uint8_t>(32, code));
    const auto plan = recipes::plan(r, Operand::kInput, Gemm::kFprop);
    check_same(run_on_host(plan, x, 1, 32), want, x);
  }
}

TEST_CASE("cuda backend plan: each GEMM role's layout and model through the host twin equals "
          "SimBackend",
          "[cuda_backend]") {
  const SimBackend sim;
  // X [M, K], W [N, K], dY [M, N] with partial 32- and 128-element blocks along every K.
  constexpr std::int64_t M = 40, K = 160, N = 72;
  const std::vector<float> x = input(M * K, 2), w = input(N * K, 4), dy = input(M * N, 6);
  for (const NamedRecipe& named : stateless_recipes()) {
    const auto state = sim.make_state(named.recipe);
    for (const auto acc :
         {recipes::Accumulation::kFp32Seq, recipes::Accumulation::kHopperSplitAccumulator,
          recipes::Accumulation::kHopperFastAccum}) {
      for (const Gemm role : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
        INFO(named.name << ", " << name(role) << ", " << recipes::name(acc));
        if (named.recipe.scaling == Scaling::rowwise_with_gw_hp && role == Gemm::kWgrad) continue;
        const auto operand = [&](Operand t) {
          const std::vector<float>& v = t == Operand::kInput ? x : t == Operand::kWeight ? w : dy;
          const std::int64_t rows = t == Operand::kWeight ? N : M;
          const std::int64_t cols = t == Operand::kGradOutput ? N : K;
          return sim.quantize(*state, t, role, {v, rows, cols}).tensor;
        };
        const sim::QuantizedTensor a =
            operand(role == Gemm::kFprop ? Operand::kInput : Operand::kGradOutput);
        const sim::QuantizedTensor b =
            operand(role == Gemm::kWgrad ? Operand::kInput : Operand::kWeight);
        const std::int64_t rows = role == Gemm::kWgrad ? N : M;
        const std::int64_t cols = role == Gemm::kFprop ? N : K;
        std::vector<float> want(static_cast<std::size_t>(rows * cols));
        sim.gemm(role, a, b, acc, {want, rows, cols});
        const auto [a_k, b_k] = k_is_cols(role);
        gpu::DeviceGemmOptions options;
        options.model = acc;
        std::vector<float> got(want.size());
        gpu::host_twin::gemm({a.data.data(), a.scale_inv.data(), a.rows, a.cols, a.block_rows,
                              a.block_cols, a.format, a_k},
                             {b.data.data(), b.scale_inv.data(), b.rows, b.cols, b.block_rows,
                              b.block_cols, b.format, b_k},
                             options, got.data());
        for (std::size_t i = 0; i < got.size(); ++i) {
          if (test::bits_of(got[i]) != test::bits_of(want[i])) {
            FAIL_CHECK("out[" << i << "]: host twin " << bits(got[i]) << ", sim " << bits(want[i]));
            break;
          }
        }
      }
    }
  }
  CHECK_THROWS_WITH(gpu::require_kernel(recipes::Accumulation::kExact),
                    Catch::Contains("no GPU kernel"));
}

TEST_CASE("cuda backend plan: high-precision GEMM layouts through the host twin equal SimBackend",
          "[cuda_backend]") {
  const SimBackend sim;
  constexpr std::int64_t M = 9, K = 37, N = 11;
  const std::vector<float> x = input(M * K, 8), w = input(N * K, 10), dy = input(M * N, 12);
  for (const auto precision : {HighPrecision::fp32, HighPrecision::bf16}) {
    for (const Gemm role : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
      INFO(name(role) << ", " << name(precision));
      const ConstMatrix a = role == Gemm::kFprop ? ConstMatrix{x, M, K} : ConstMatrix{dy, M, N};
      const ConstMatrix b = role == Gemm::kWgrad ? ConstMatrix{x, M, K} : ConstMatrix{w, N, K};
      const std::int64_t rows = role == Gemm::kWgrad ? N : M;
      const std::int64_t cols = role == Gemm::kFprop ? N : K;
      std::vector<float> want(static_cast<std::size_t>(rows * cols)), got(want.size());
      sim.high_precision_gemm(role, a, b, precision, {want, rows, cols});
      const auto [a_k, b_k] = k_is_cols(role);
      gpu::DenseGemmOptions options;
      options.round_operands_to_bf16 = precision == HighPrecision::bf16;
      gpu::host_twin::high_precision_gemm({a.data.data(), a.rows, a.cols, a_k},
                                          {b.data.data(), b.rows, b.cols, b_k}, options,
                                          got.data());
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (test::bits_of(got[i]) != test::bits_of(want[i])) {
          FAIL_CHECK("out[" << i << "]: host twin " << bits(got[i]) << ", sim " << bits(want[i]));
          break;
        }
      }
    }
  }
}

}  // namespace fp8lab::experiments
