#include "experiments/run/quantized_adamw.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

namespace fp8lab::experiments {
namespace {

std::vector<float> to_floats(const torch::Tensor& t) {
  const auto cpu = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
  std::vector<float> out(static_cast<std::size_t>(cpu.numel()));
  if (!out.empty()) std::memcpy(out.data(), cpu.data_ptr<float>(), out.size() * sizeof(float));
  return out;
}

torch::Tensor tensor_like(const std::vector<float>& values, const torch::Tensor& like) {
  auto cpu = torch::empty({static_cast<std::int64_t>(values.size())}, torch::kFloat);
  if (!values.empty()) {
    std::memcpy(cpu.data_ptr<float>(), values.data(), values.size() * sizeof(float));
  }
  return cpu.reshape(like.sizes()).to(like.device());
}

Field<double> sqnr_db(double signal, double noise) {
  if (signal == 0.0 || noise == 0.0) return Field<double>::null();
  return 10.0 * std::log10(signal / noise);
}

}  // namespace

QuantizedAdamW::QuantizedAdamW(std::vector<torch::Tensor> params,
                               torch::optim::AdamWOptions options,
                               sim::optim::OptimizerPrecision precision, std::uint64_t seed)
    : torch::optim::AdamW(params, options),
      precision_(precision),
      seed_(seed),
      order_(std::move(params)) {
  for (const auto& p : order_) {
    index_.emplace(p.unsafeGetTensorImpl(), index_.size());
    if (p.scalar_type() != torch::kFloat) {
      throw std::invalid_argument(
          "optimizer_states: the quantized AdamW steps fp32 parameters only (bf16 master weights "
          "are fp32 tensors holding bf16 values)");
    }
    moments_.push_back(
        sim::optim::initial_moments(static_cast<std::size_t>(p.numel()), precision_));
  }
  // bf16 master weights start as the bf16 of the initial weights.
  if (precision_.master != sim::optim::MasterWeights::kFp32) {
    torch::NoGradGuard no_grad;
    for (auto& p : order_) p.copy_(p.to(torch::kBFloat16).to(torch::kFloat));
  }
}

torch::Tensor QuantizedAdamW::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  errors_ = {};
  errors_by_parameter_.assign(order_.size(), sim::optim::StepErrors{});
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto found = index_.find(p.unsafeGetTensorImpl());
      if (found == index_.end()) throw std::logic_error("QuantizedAdamW: unknown parameter");
      const std::size_t index = found->second;
      auto& slot = state()[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        slot = std::move(fresh);
      }
      auto& st = static_cast<torch::optim::AdamWParamState&>(*slot);
      st.step(st.step() + 1);
      sim::optim::AdamWHyper hyper;
      hyper.lr = static_cast<float>(o.lr());
      hyper.beta1 = static_cast<float>(std::get<0>(o.betas()));
      hyper.beta2 = static_cast<float>(std::get<1>(o.betas()));
      hyper.eps = static_cast<float>(o.eps());
      hyper.weight_decay = static_cast<float>(o.weight_decay());
      hyper.step = st.step();
      auto weights = to_floats(p);
      const auto grads = to_floats(p.grad());
      // bf16_sr's bits: a stream per (parameter, step), the run's seed as key.
      const std::uint64_t stream = (static_cast<std::uint64_t>(index) << 32) |
                                   static_cast<std::uint64_t>(st.step());
      errors_by_parameter_[index] =
          sim::optim::adamw_step(hyper, precision_, weights, grads, moments_[index], seed_, stream);
      errors_ += errors_by_parameter_[index];
      p.copy_(tensor_like(weights, p));
      std::vector<float> decoded(weights.size());
      sim::optim::decode_state(moments_[index].m, precision_.m, decoded);
      st.exp_avg(tensor_like(decoded, p));
      sim::optim::decode_state(moments_[index].v, precision_.v, decoded);
      st.exp_avg_sq(tensor_like(decoded, p));
    }
  }
  return loss;
}

std::unique_ptr<torch::optim::AdamW> make_adamw(
    std::vector<torch::Tensor> params, torch::optim::AdamWOptions options,
    const std::optional<sim::optim::OptimizerPrecision>& precision, std::uint64_t seed) {
  if (!precision) return std::make_unique<torch::optim::AdamW>(std::move(params), options);
  return std::make_unique<QuantizedAdamW>(std::move(params), options, *precision, seed);
}

OptimizerStateRow optimizer_state_row(std::int64_t step, const sim::optim::StepErrors& e) {
  OptimizerStateRow row;
  row.step = step;
  row.m_sqnr_db = sqnr_db(e.m_signal, e.m_noise);
  row.v_sqnr_db = sqnr_db(e.v_signal, e.v_noise);
  row.update_rel_error = e.update_signal == 0.0 || e.update_noise == 0.0
                             ? Field<double>::null()
                             : Field<double>(std::sqrt(e.update_noise / e.update_signal));
  return row;
}

std::vector<LayerStatsRow> optimizer_state_sidecar_rows(std::int64_t step,
                                                        const std::vector<std::string>& names,
                                                        const QuantizedAdamW& optimizer) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const auto& errors = optimizer.last_step_errors_by_parameter();
  if (names.size() != errors.size()) {
    throw std::logic_error("optimizer_state_sidecar_rows: a name per parameter expected");
  }
  std::vector<LayerStatsRow> rows;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const auto& e = errors[i];
    if (e.count == 0) continue;  // no gradient, no step
    const auto add = [&](const char* tensor, double signal, double noise, double amax,
                         std::int64_t underflowed, std::int64_t nan) {
      LayerStatsRow r;
      r.step = step;
      r.layer = names[i];
      r.tensor = tensor;
      r.gemm = "optimizer";
      r.copy = "stored";
      r.recipe = kOptimizerStatesRecipe;
      r.quantizations = 1;
      r.count = e.count;
      r.underflowed = underflowed;
      r.saturated = 0;
      r.nan = nan;
      r.underflow_pct = 100.0 * static_cast<double>(underflowed) / static_cast<double>(e.count);
      r.overflow_pct = kNaN;
      r.sqnr_db = signal == 0.0  ? kNaN
                  : noise == 0.0 ? std::numeric_limits<double>::infinity()
                                 : 10.0 * std::log10(signal / noise);
      r.mse = noise / static_cast<double>(e.count);
      r.amax = amax;
      r.scale_inv_min = r.scale_inv_max = kNaN;
      r.max_block_dynamic_range_log2 = kNaN;
      r.kurtosis = kNaN;
      rows.push_back(std::move(r));
    };
    add("exp_avg", e.m_signal, e.m_noise, e.m_amax, e.m_underflowed, e.m_nan);
    add("exp_avg_sq", e.v_signal, e.v_noise, e.v_amax, e.v_underflowed, e.v_nan);
  }
  return rows;
}

nlohmann::json optimizer_states_json(const recipes::OptimizerStates& states,
                                     const std::vector<OptimizerStateRow>& rows) {
  const auto value = [](const Field<double>& f) {
    return f.has_value() ? nlohmann::json(*f) : nlohmann::json(nullptr);
  };
  auto array = nlohmann::json::array();
  for (const auto& r : rows) {
    array.push_back({{"step", r.step},
                     {"m_sqnr_db", value(r.m_sqnr_db)},
                     {"v_sqnr_db", value(r.v_sqnr_db)},
                     {"update_rel_error", value(r.update_rel_error)}});
  }
  return {{"m", recipes::name(states.m)},
          {"v", recipes::name(states.v)},
          {"scaling", recipes::state_scaling_text(states)},
          {"expansion", recipes::name(states.expansion)},
          {"master_weights", recipes::name(states.master_weights)},
          {"rows", std::move(array)}};
}

}  // namespace fp8lab::experiments
