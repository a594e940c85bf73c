// Acceptance (issue 9): with FP8 on, an Fp8Linear's gradients match finite differences of the
// emulated forward within a stated bound.
//
// Which finite differences. The emulated forward y = Q(x)·Q(W)ᵀ + b is piecewise constant in x
// and W (quantization), so its true derivative is 0 almost everywhere; what FP8 training computes
// is the straight-through estimate (STE): the derivative of the dequantized-operand function
//   L(x, W, b) = Σ_mn G_mn · (Σ_k x̂_mk ŵ_nk + b_n),   x̂ = deq(Q(x)), ŵ = deq(Q(W)),
// with ∂x̂/∂x = ∂ŵ/∂W = 1. So dL/dx_ij is the central difference of L over x̂_ij with ŵ fixed (and
// likewise for W and b), evaluated in float64 on the operands the forward GEMM used (obtained by
// quantizing with a fresh state of the same recipe: the layer's first step uses the same scales).
//
// The bound, per gradient element (here for dx; dW and db are analogous):
//   dx_ij = GEMM(A, B)_ij, A = deq(Q_dgrad(G)), B = the dgrad copy of W (deq, or W in high
//   precision), while the finite difference is Σ_n G_in ŵ_nj (+ its float64 rounding). Hence
//   |dx_ij - FD_ij| <= Σ_n |A_in B_nj - G_in ŵ_nj|             (1) the gradient's own quantization
//                                                                  and the dgrad copy of W
//                    + γ_{N+4} Σ_n |A_in B_nj|                 (2) fp32_seq accumulation: N RN adds,
//                                                                  RN(sa·sb), RN(P·s), block adds
//                    + fd_slack                                 (3) float64 rounding of L, / 2ε
// with γ_n = n·u/(1-n·u), u = 2^-24. Term (1) is computed from the quantized G and W, so the bound
// is tight: any misrouted operand, transpose, or scale applied twice breaks it (the test also
// checks that the bound is well below the gradients' size, so it can fail).
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "experiments/linear/sim_backend.hpp"
#include "sim/cast.hpp"
#include "tests/experiments/linear_step.hpp"

namespace fp8lab::experiments {
namespace {

constexpr std::int64_t M = 64, K = 64, N = 32;
const double kU = std::ldexp(1.0, -24);

double gamma(double n) { return n * kU / (1.0 - n * kU); }

// Row-major float64 matrix.
struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double operator()(std::int64_t r, std::int64_t c) const {
    return v[static_cast<std::size_t>(r * cols + c)];
  }
  double& operator()(std::int64_t r, std::int64_t c) {
    return v[static_cast<std::size_t>(r * cols + c)];
  }
};

Matrix from_tensor(const torch::Tensor& t) {
  Matrix m{t.size(0), t.size(1), {}};
  const auto c = t.contiguous();
  m.v.assign(c.const_data_ptr<float>(), c.const_data_ptr<float>() + c.numel());
  return m;
}

// The exact operand values a GEMM sees: decode(q) * scale_inv, in float64 (exact).
Matrix dequantized(const sim::QuantizedTensor& q) {
  Matrix m{q.rows, q.cols, std::vector<double>(static_cast<std::size_t>(q.rows * q.cols))};
  for (std::int64_t r = 0; r < q.rows; ++r) {
    for (std::int64_t c = 0; c < q.cols; ++c) {
      m(r, c) = static_cast<double>(sim::decode_fp8(q.code_at(r, c), q.format)) *
                static_cast<double>(q.scale_inv_at(r, c));
    }
  }
  return m;
}

// The operand of `role` as the layer's GEMM saw it.
Matrix operand(const LinearBackend& backend, LinearScalingState& state,
               const recipes::Recipe& recipe, Operand tensor, Gemm role,
               const torch::Tensor& value) {
  if (!gemm_runs_fp8(recipe, role)) return from_tensor(value);
  const auto c = value.contiguous();
  return dequantized(
      backend
          .quantize(state, tensor, role,
                    {{c.const_data_ptr<float>(), static_cast<std::size_t>(c.numel())},
                     c.size(0),
                     c.size(1)})
          .tensor);
}

// L = Σ_mn G_mn (Σ_k x_mk w_nk + b_n) in float64, and Σ of the magnitudes of its terms.
double loss(const Matrix& g, const Matrix& x, const Matrix& w, const std::vector<double>& b,
            double* magnitude = nullptr) {
  double l = 0.0, mag = 0.0;
  for (std::int64_t m = 0; m < M; ++m) {
    for (std::int64_t n = 0; n < N; ++n) {
      double y = b[static_cast<std::size_t>(n)], ymag = std::fabs(y);
      for (std::int64_t k = 0; k < K; ++k) {
        y += x(m, k) * w(n, k);
        ymag += std::fabs(x(m, k) * w(n, k));
      }
      l += g(m, n) * y;
      mag += std::fabs(g(m, n)) * ymag;
    }
  }
  if (magnitude != nullptr) *magnitude = mag;
  return l;
}

struct Tally {
  std::vector<double> bounds, gradients;
  double median_ratio() {
    auto median = [](std::vector<double> v) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    return median(bounds) / median(gradients);
  }
};

// A gradient of one matrix parameter against the central difference of the loss at every
// `stride`-th entry. The difference may be the quantization error of the GEMM that made it (the
// sum over its `terms` terms of |dequantized product - the loss's product|, from term(i, j, r)),
// the fp32_seq rounding of those dot products and the float64 slack of the difference quotient.
template <typename LossOf, typename Term>
void check_gradient(const char* name, const Matrix& grad, const Matrix& param, std::int64_t stride,
                    std::int64_t terms, double eps, double fd_slack, LossOf loss_of, Term term,
                    Tally& tally) {
  for (std::int64_t flat = 0; flat < param.rows * param.cols; flat += stride) {
    const std::int64_t i = flat / param.cols, j = flat % param.cols;
    Matrix plus = param, minus = param;
    plus(i, j) += eps;
    minus(i, j) -= eps;
    const double fd = (loss_of(plus) - loss_of(minus)) / (2.0 * eps);
    double quantization = 0.0, products = 0.0;
    for (std::int64_t r = 0; r < terms; ++r) {
      const auto [dequantized, exact] = term(i, j, r);
      quantization += std::fabs(dequantized - exact);
      products += std::fabs(dequantized);
    }
    const double bound = quantization + gamma(static_cast<double>(terms + 4)) * products + fd_slack;
    INFO(name << "[" << i << "][" << j << "] = " << grad(i, j) << ", finite difference " << fd
              << ", bound " << bound);
    REQUIRE(std::fabs(grad(i, j) - fd) <= bound);
    tally.bounds.push_back(bound);
    tally.gradients.push_back(std::fabs(fd));
  }
}

void run_case(const recipes::Recipe& recipe) {
  auto backend = std::make_shared<const SimBackend>();
  const torch::Tensor x = test::normal({M, K}, 11);
  const torch::Tensor w = test::normal({N, K}, 12, 0.125);
  const torch::Tensor b = test::normal({N}, 13, 0.5);
  const torch::Tensor g = test::normal({M, N}, 14, 0.01);

  const test::LinearStep step = test::fp8_linear_step(recipe, x, w, b, g);
  const torch::Tensor& y = step.y;
  const Matrix dx = from_tensor(step.dx), dw = from_tensor(step.dw);
  const torch::Tensor& db = step.db;

  auto state = backend->make_state(recipe);
  const Matrix xf = operand(*backend, *state, recipe, Operand::kInput, Gemm::kFprop, x);
  const Matrix wf = operand(*backend, *state, recipe, Operand::kWeight, Gemm::kFprop, w);
  const Matrix xw = operand(*backend, *state, recipe, Operand::kInput, Gemm::kWgrad, x);
  const Matrix wd = operand(*backend, *state, recipe, Operand::kWeight, Gemm::kDgrad, w);
  const Matrix gd = operand(*backend, *state, recipe, Operand::kGradOutput, Gemm::kDgrad, g);
  const Matrix gw = operand(*backend, *state, recipe, Operand::kGradOutput, Gemm::kWgrad, g);
  const Matrix gm = from_tensor(g);
  std::vector<double> bias(b.const_data_ptr<float>(), b.const_data_ptr<float>() + N);

  // The forward is the dequantized-operand function: y = x̂ ŵᵀ + b within fp32_seq rounding.
  {
    const Matrix ym = from_tensor(y.detach());
    for (std::int64_t m = 0; m < M; ++m) {
      for (std::int64_t n = 0; n < N; ++n) {
        double exact = bias[static_cast<std::size_t>(n)], mag = std::fabs(exact);
        for (std::int64_t k = 0; k < K; ++k) {
          exact += xf(m, k) * wf(n, k);
          mag += std::fabs(xf(m, k) * wf(n, k));
        }
        INFO("y[" << m << "][" << n << "] = " << ym(m, n) << ", dequantized-operand value "
                  << exact);
        REQUIRE(std::fabs(ym(m, n) - exact) <= gamma(K + 5) * mag);
      }
    }
  }

  double magnitude = 0.0;
  loss(gm, xf, wf, bias, &magnitude);
  const double eps = 1.0 / 64.0;
  // Float64 rounding of L: each term has at most M*N*(K+1) rounding steps of 2^-53 relative
  // (a gross overestimate), divided by 2ε for the difference quotient.
  const double fd_slack = 2.0 * magnitude * static_cast<double>(M * N * (K + 1)) *
                          std::ldexp(1.0, -53) / (2.0 * eps);

  Tally tally;
  // dx at a sample of entries (every 37th: all rows and columns get visited): dx = G Ŵ over N.
  check_gradient(
      "dx", dx, xf, 37, N, eps, fd_slack,
      [&](const Matrix& x_probe) { return loss(gm, x_probe, wf, bias); },
      [&](std::int64_t i, std::int64_t j, std::int64_t n) {
        return std::pair{gd(i, n) * wd(n, j), gm(i, n) * wf(n, j)};
      },
      tally);
  // dW: Gᵀ X̂ over M.
  check_gradient(
      "dW", dw, wf, 29, M, eps, fd_slack,
      [&](const Matrix& w_probe) { return loss(gm, xf, w_probe, bias); },
      [&](std::int64_t i, std::int64_t j, std::int64_t m) {
        return std::pair{gw(m, i) * xw(m, j), gm(m, i) * xf(m, j)};
      },
      tally);
  // db: every entry; an fp32 sum of G over the rows.
  for (std::int64_t n = 0; n < N; ++n) {
    std::vector<double> plus = bias, minus = bias;
    plus[static_cast<std::size_t>(n)] += eps;
    minus[static_cast<std::size_t>(n)] -= eps;
    const double fd = (loss(gm, xf, wf, plus) - loss(gm, xf, wf, minus)) / (2.0 * eps);
    double magnitude_g = 0.0;
    for (std::int64_t m = 0; m < M; ++m) magnitude_g += std::fabs(gm(m, n));
    const double bound = gamma(M) * magnitude_g + fd_slack;
    const double got = db[n].item<float>();
    INFO("db[" << n << "] = " << got << ", finite difference " << fd << ", bound " << bound);
    REQUIRE(std::fabs(got - fd) <= bound);
  }
  // The check can fail: the bound is well below the size of the gradients it checks.
  const double ratio = tally.median_ratio();
  INFO("median bound / median |gradient| = " << ratio);
  CHECK(ratio < 0.5);
}

}  // namespace

TEST_CASE("FP8 gradients match finite differences of the dequantized-operand forward (STE)",
          "[linear]") {
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::current,
                                recipes::Scaling::tensorwise, recipes::Scaling::rowwise,
                                recipes::Scaling::rowwise_with_gw_hp, recipes::Scaling::block,
                                recipes::Scaling::mxfp8);
  recipes::Recipe recipe = test::fp32_seq_recipe(scaling);
  INFO("scaling " << recipes::name(scaling) << ", format " << recipes::name(recipe.fp8_format));
  run_case(recipe);
}

TEST_CASE("Partial overrides: the overridden GEMMs use the unquantized operands", "[linear]") {
  const auto overrides = GENERATE(recipes::OverrideLinearPrecision{true, false, false},
                                  recipes::OverrideLinearPrecision{false, true, false},
                                  recipes::OverrideLinearPrecision{false, false, true});
  recipes::Recipe recipe = test::fp32_seq_recipe(recipes::Scaling::delayed);
  recipe.override_linear_precision = overrides;
  INFO("override_linear_precision (" << overrides.fprop << ", " << overrides.dgrad << ", "
                                     << overrides.wgrad << ")");
  run_case(recipe);
}

}  // namespace fp8lab::experiments
