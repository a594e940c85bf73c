#include "experiments/run/probe_metrics.hpp"

#include <c10/util/irange.h>

#include <cmath>
#include <limits>

namespace fp8lab::experiments {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double dot64(const torch::Tensor& a, const torch::Tensor& b) { return a.dot(b).item<double>(); }
double ratio(double a, double b) { return b == 0.0 ? kNaN : a / b; }

}  // namespace

void set_gradient_metrics(ProbeRow& row, const torch::Tensor& g_q, const torch::Tensor& g) {
  const torch::Tensor e = g_q - g;
  const double gg = dot64(g, g), qq = dot64(g_q, g_q);
  row.grad_norm = std::sqrt(gg);
  row.error_norm = e.norm().item<double>();
  row.cosine = ratio(dot64(g_q, g), std::sqrt(gg * qq));
  row.rel_error = ratio(row.error_norm, row.grad_norm);
  // e = bias * g + the rest, the rest orthogonal to g.
  row.bias = ratio(dot64(e, g), gg);
  row.noise = gg == 0.0 ? kNaN : (e - row.bias * g).norm().item<double>() / row.grad_norm;
  row.chmiel_ratio = row.error_norm == 0.0 ? std::numeric_limits<double>::infinity()
                                           : row.grad_norm / row.error_norm;
}

AdamWStep adamw_step(const torch::optim::AdamW& optimizer, double grad_clip) {
  const auto& options =
      static_cast<const torch::optim::AdamWOptions&>(optimizer.param_groups().at(0).options());
  AdamWStep s;
  s.lr = options.lr();
  s.beta1 = std::get<0>(options.betas());
  s.beta2 = std::get<1>(options.betas());
  s.eps = options.eps();
  s.weight_decay = options.weight_decay();
  s.grad_clip = grad_clip;
  return s;
}

std::vector<AdamWMoments> adamw_moments(const torch::optim::AdamW& optimizer,
                                        const std::vector<torch::Tensor>& parameters) {
  std::vector<AdamWMoments> moments;
  for (const auto& p : parameters) {
    AdamWMoments m;
    const auto it = optimizer.state().find(p.unsafeGetTensorImpl());
    if (it != optimizer.state().end()) {
      const auto& state = static_cast<const torch::optim::AdamWParamState&>(*it->second);
      m.step = state.step();
      m.exp_avg = state.exp_avg().detach().reshape({-1}).to(torch::kCPU, torch::kDouble);
      m.exp_avg_sq = state.exp_avg_sq().detach().reshape({-1}).to(torch::kCPU, torch::kDouble);
    }
    moments.push_back(std::move(m));
  }
  return moments;
}

std::vector<torch::Tensor> adamw_updates(const std::vector<torch::Tensor>& grads,
                                         const std::vector<torch::Tensor>& weights,
                                         const std::vector<AdamWMoments>& moments,
                                         const AdamWStep& step) {
  // clip_grad_norm_: scale by max_norm / (total + 1e-6) when that is below 1.
  double scale = 1.0;
  if (step.grad_clip > 0.0) {
    double squares = 0.0;
    for (const auto& g : grads) squares += dot64(g, g);
    const double coefficient = step.grad_clip / (std::sqrt(squares) + 1e-6);
    if (coefficient < 1.0) scale = coefficient;
  }
  std::vector<torch::Tensor> updates;
  for (const auto i : c10::irange(grads.size())) {
    const auto g = grads[i] * scale;
    const auto& m = moments[i];
    const double t = static_cast<double>(m.step + 1);
    const auto exp_avg = m.exp_avg.defined() ? step.beta1 * m.exp_avg + (1 - step.beta1) * g
                                             : (1 - step.beta1) * g;
    const auto exp_avg_sq = m.exp_avg_sq.defined()
                                ? step.beta2 * m.exp_avg_sq + (1 - step.beta2) * g * g
                                : (1 - step.beta2) * g * g;
    const double bias1 = 1 - std::pow(step.beta1, t), bias2 = 1 - std::pow(step.beta2, t);
    const auto denominator = exp_avg_sq.sqrt() / std::sqrt(bias2) + step.eps;
    updates.push_back(-step.lr * step.weight_decay * weights[i] -
                      step.lr / bias1 * exp_avg / denominator);
  }
  return updates;
}

void set_update_metrics(ProbeRow& row, const torch::Tensor& u_q, const torch::Tensor& u) {
  const double uu = dot64(u, u), qq = dot64(u_q, u_q);
  row.update_cosine = ratio(dot64(u_q, u), std::sqrt(uu * qq));
  row.update_rel_error = ratio((u_q - u).norm().item<double>(), std::sqrt(uu));
}

}  // namespace fp8lab::experiments
