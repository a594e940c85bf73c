#include "experiments/run/run_diagnostics.hpp"

#include <fmt/format.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "experiments/linear/backend_linear.hpp"
#include "experiments/linear/convert_model.hpp"

namespace fp8lab::experiments {
namespace {

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

RunDiagnostics::RunDiagnostics(recipes::Autoswitch rule, std::optional<FaultInjection> injection)
    : rule_(rule) {
  watch_->injection = std::move(injection);
}

void check_injection_target(const FaultInjection& fault, const std::vector<std::string>& linears) {
  if (std::find(linears.begin(), linears.end(), fault.layer) != linears.end()) return;
  std::string names;
  for (const auto& name : linears) names.append(names.empty() ? "" : ", ").append(name);
  throw std::invalid_argument("--inject-nan: the model has no Linear '" + fault.layer +
                              "'; its Linears: " + names);
}

void RunDiagnostics::attach(torch::nn::Module& model) {
  std::vector<std::string> linears;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    auto* linear = dynamic_cast<BackendLinearImpl*>(item.value().get());
    if (linear == nullptr) continue;
    linear->set_watch(std::make_shared<LayerWatch>(item.key(), watch_));
    linears.push_back(item.key());
  }
  if (watch_->injection) check_injection_target(*watch_->injection, linears);
}

void RunDiagnostics::after_step(torch::nn::Module& model, std::int64_t step) {
  if (!not_run_) {
    // The first step: every Linear the model calls has run in it.
    not_run_ = fp8_linears_not_run(model);
    for (const auto& name : *not_run_) {
      std::fprintf(stderr,
                   "fp8lab: warning: Linear '%s' was converted to FP8 but its forward did not run "
                   "in training step %lld: the model does not call it (a C++ member holder, or a "
                   "module such as MultiheadAttention that reads its weight itself), so this layer "
                   "is not FP8 in effect\n",
                   name.c_str(), static_cast<long long>(step));
    }
  }
  for (auto& event : apply_autoswitch(model, rule_, step)) events_.push_back(std::move(event));
}

void RunDiagnostics::add_to_record(RunRecord& record) const {
  const auto site = watch_->first();
  record.other["first_non_finite"] = site ? to_json(*site) : nlohmann::json(nullptr);
  record.fp8_linears_not_run = not_run_ ? Field<std::vector<std::string>>(*not_run_)
                                        : Field<std::vector<std::string>>::null();
  if (rule_.enabled) {
    auto switches = nlohmann::json::array();
    for (const auto& e : events_) switches.push_back(to_json(e));
    record.other["autoswitch"] = {{"underflow_percent", rule_.underflow_percent},
                                  {"mse", rule_.mse},
                                  {"switches", std::move(switches)}};
  }
  if (const auto& fault = watch_->injection) {
    record.other["fault_injection"] = {{"kind", "nan"},
                                       {"layer", fault->layer},
                                       {"step", fault->step},
                                       {"pass", fault->backward ? "backward" : "forward"}};
  }
}

nlohmann::json to_json(const NonFiniteSite& site) {
  auto history = nlohmann::json::array();
  for (const auto& h : site.history) {
    history.push_back({{"step", h.step},
                       {"amax", finite_or_null(h.amax)},
                       {"scale_min", finite_or_null(h.scale_min)},
                       {"scale_max", finite_or_null(h.scale_max)}});
  }
  auto values = nlohmann::json::array();
  for (const auto& v : site.values) {
    values.push_back({{"index", v.index},
                      {"value", finite_or_null(v.value)},
                      {"bits", fmt::format("0x{:08x}", v.bits)}});
  }
  return {{"step", site.step},
          {"pass", site.backward ? "backward" : "forward"},
          {"layer", site.layer},
          {"tensor", std::string(name(site.tensor))},
          {"gemm", std::string(name(site.gemm))},
          {"quantized", site.quantized},
          {"shape", {site.rows, site.cols}},
          {"first_index", site.first_index},
          {"nan_count", site.nan_count},
          {"inf_count", site.inf_count},
          {"history", std::move(history)},
          {"values", std::move(values)}};
}

nlohmann::json to_json(const AutoswitchEvent& event) {
  return {{"step", event.step},
          {"layer", event.layer},
          {"gemm", std::string(name(event.gemm))},
          {"tensor", std::string(name(event.tensor))},
          {"statistic", event.crossing.statistic},
          {"value", event.crossing.value},
          {"threshold", event.crossing.threshold}};
}

}  // namespace fp8lab::experiments
