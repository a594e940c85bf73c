// Acceptance (issue 9): an Fp8Linear whose recipe overrides all three GEMMs
// (override_linear_precision = (true, true, true)) gives exactly the outputs and gradients of the
// baseline HighPrecisionLinear, bit for bit, with fp32 and with bf16 high-precision operands, over
// several training steps with weight updates. Both run the deterministic high-precision GEMM of
// docs/numerics.md §3; the baseline itself is checked against a float64 GEMM so that two equally wrong
// Linears cannot pass, and an FP8 Linear without overrides must differ (the comparison can fail).
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <cmath>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/high_precision_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "sim/cast.hpp"

namespace fp8lab::experiments {
namespace {

constexpr std::int64_t kRows = 24, kIn = 48, kOut = 32;

struct StepResult {
  torch::Tensor y, dx, dw, db;
};

// One training step of `linear` inside an enabled FP8 region; then w -= 0.01 * dw (both models
// take the same update from their own gradients).
StepResult train_step(BackendLinearImpl& linear, const torch::Tensor& x_value,
                      const torch::Tensor& dy) {
  torch::Tensor x = x_value.clone().requires_grad_(true);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = linear.forward(x);
  }
  y.backward(dy);
  StepResult r{y.detach().clone(), x.grad().clone(), linear.weight.grad().clone(),
               linear.bias.grad().clone()};
  {
    torch::NoGradGuard no_grad;
    linear.weight.sub_(linear.weight.grad() * 0.01f);
    linear.bias.sub_(linear.bias.grad() * 0.01f);
    linear.weight.mutable_grad().zero_();
    linear.bias.mutable_grad().zero_();
  }
  return r;
}

float round_operand(float v, HighPrecision precision) {
  return precision == HighPrecision::bf16 ? sim::bf16_to_fp32(sim::fp32_to_bf16(v)) : v;
}

// |y - (x w^T + b)| against float64 on the (rounded) operands, bounded by the fp32_seq rounding
// error of docs/numerics.md §3: K sequential adds of RN products, then the bias add:
// |err| <= gamma_{K+2} (sum_k |x_k w_k| + |b|), gamma_n = n u / (1 - n u), u = 2^-24.
void check_against_float64(const torch::Tensor& y, const torch::Tensor& x, const torch::Tensor& w,
                           const torch::Tensor& b, HighPrecision precision) {
  const double u = std::ldexp(1.0, -24);
  const double n = static_cast<double>(kIn + 2);
  const double gamma = n * u / (1.0 - n * u);
  auto xa = x.accessor<float, 2>();
  auto wa = w.accessor<float, 2>();
  auto ba = b.accessor<float, 1>();
  auto ya = y.accessor<float, 2>();
  double largest = 0.0;
  for (std::int64_t m = 0; m < kRows; ++m) {
    for (std::int64_t o = 0; o < kOut; ++o) {
      double exact = ba[o], magnitude = std::fabs(ba[o]);
      for (std::int64_t k = 0; k < kIn; ++k) {
        const double p = static_cast<double>(round_operand(xa[m][k], precision)) *
                         static_cast<double>(round_operand(wa[o][k], precision));
        exact += p;
        magnitude += std::fabs(p);
      }
      INFO("y[" << m << "][" << o << "] = " << ya[m][o] << ", float64 " << exact);
      REQUIRE(std::fabs(ya[m][o] - exact) <= gamma * magnitude);
      largest = std::fmax(largest, std::fabs(exact));
    }
  }
  REQUIRE(largest > 0.1);  // not a degenerate all-zero case
}

}  // namespace

TEST_CASE("Fp8Linear with overrides (T,T,T) equals the baseline Linear bit for bit", "[linear]") {
  auto backend = std::make_shared<const SimBackend>();
  const auto precision = GENERATE(HighPrecision::fp32, HighPrecision::bf16);
  const auto scaling =
      GENERATE(recipes::Scaling::delayed, recipes::Scaling::current, recipes::Scaling::mxfp8);
  recipes::Recipe recipe = test::fp32_seq_recipe(scaling);
  recipe.override_linear_precision = {true, true, true};
  INFO("high precision " << name(precision) << ", scaling " << recipes::name(scaling));

  const torch::Tensor w0 = test::normal({kOut, kIn}, 1, 0.2);
  const torch::Tensor b0 = test::normal({kOut}, 2, 0.1);
  HighPrecisionLinearImpl baseline(w0.clone().requires_grad_(true), b0.clone().requires_grad_(true),
                                   backend, precision);
  Fp8LinearImpl fp8(w0.clone().requires_grad_(true), b0.clone().requires_grad_(true), recipe,
                    backend, precision);

  for (std::uint64_t step = 0; step < 3; ++step) {
    INFO("step " << step);
    const torch::Tensor x = test::normal({kRows, kIn}, 100 + step);
    const torch::Tensor dy = test::normal({kRows, kOut}, 200 + step, 0.5);
    if (step == 0) check_against_float64(baseline.forward(x).detach(), x, w0, b0, precision);
    const StepResult expected = train_step(baseline, x, dy);
    const StepResult actual = train_step(fp8, x, dy);
    CHECK(test::bitwise_difference(actual.y, expected.y) == "");
    CHECK(test::bitwise_difference(actual.dx, expected.dx) == "");
    CHECK(test::bitwise_difference(actual.dw, expected.dw) == "");
    CHECK(test::bitwise_difference(actual.db, expected.db) == "");
  }
  // Nothing was quantized: every GEMM ran in high precision (3 steps x 1 call each).
  for (std::size_t role = 0; role < 3; ++role) {
    CHECK(fp8.stats().fp8_gemms[role] == 0);
    CHECK(fp8.stats().high_precision_gemms[role] == 3);
  }
  CHECK(fp8.stats().operand(Operand::kInput, Gemm::kFprop).quantizations == 0);
}

TEST_CASE("bf16 and fp32 baselines differ, and an FP8 Linear without overrides differs from both",
          "[linear]") {
  auto backend = std::make_shared<const SimBackend>();
  const torch::Tensor w0 = test::normal({kOut, kIn}, 3, 0.2);
  const torch::Tensor x = test::normal({kRows, kIn}, 4);
  const torch::Tensor dy = test::normal({kRows, kOut}, 5);
  HighPrecisionLinearImpl fp32(w0.clone().requires_grad_(true),
                               torch::zeros({kOut}).requires_grad_(true), backend,
                               HighPrecision::fp32);
  HighPrecisionLinearImpl bf16(w0.clone().requires_grad_(true),
                               torch::zeros({kOut}).requires_grad_(true), backend,
                               HighPrecision::bf16);
  Fp8LinearImpl fp8(w0.clone().requires_grad_(true), torch::zeros({kOut}).requires_grad_(true),
                    test::fp32_seq_recipe(recipes::Scaling::current), backend, HighPrecision::fp32);
  const StepResult a = train_step(fp32, x, dy);
  const StepResult b = train_step(bf16, x, dy);
  const StepResult c = train_step(fp8, x, dy);
  CHECK(test::bitwise_difference(a.y, b.y) != "");
  CHECK(test::bitwise_difference(a.y, c.y) != "");
  CHECK(test::bitwise_difference(a.dx, c.dx) != "");
  CHECK(test::bitwise_difference(a.dw, c.dw) != "");
  CHECK(fp8.stats().fp8_gemms[0] == 1);
  CHECK(fp8.stats().fp8_gemms[1] == 1);
  CHECK(fp8.stats().fp8_gemms[2] == 1);
}

TEST_CASE("Outside an FP8 region an Fp8Linear runs the baseline's high-precision GEMMs",
          "[linear]") {
  auto backend = std::make_shared<const SimBackend>();
  const torch::Tensor w0 = test::normal({kOut, kIn}, 6, 0.2);
  const torch::Tensor x = test::normal({2, kRows / 2, kIn}, 7);  // leading dims fold into rows
  HighPrecisionLinearImpl baseline(w0.clone(), test::normal({kOut}, 8), backend,
                                   HighPrecision::bf16);
  Fp8LinearImpl fp8(w0.clone(), baseline.bias.clone(),
                    test::fp32_seq_recipe(recipes::Scaling::delayed), backend, HighPrecision::bf16);
  const torch::Tensor expected = baseline.forward(x);
  CHECK(expected.sizes() == torch::IntArrayRef({2, kRows / 2, kOut}));
  CHECK(test::bitwise_difference(fp8.forward(x), expected) == "");
  {
    Fp8Autocast off(false);  // a disabled region is the same as none
    CHECK(test::bitwise_difference(fp8.forward(x), expected) == "");
  }
  CHECK(fp8.stats().operand(Operand::kInput, Gemm::kFprop).quantizations == 0);
  CHECK(fp8.stats().high_precision_gemms[0] == 2);
}

}  // namespace fp8lab::experiments
