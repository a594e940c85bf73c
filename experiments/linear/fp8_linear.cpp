#include "experiments/linear/fp8_linear.hpp"

#include <torch/nn/modules/linear.h>

#include <ostream>
#include <stdexcept>
#include <string>

#include "experiments/linear/autocast.hpp"
#include "recipes/lowering.hpp"
#include "recipes/role_rules.hpp"

namespace fp8lab::experiments {

Fp8LinearImpl::Fp8LinearImpl(const torch::nn::LinearImpl& source, recipes::Recipe recipe,
                             std::shared_ptr<const LinearBackend> backend,
                             HighPrecision high_precision, std::string layer)
    : Fp8LinearImpl(source.weight, source.bias, std::move(recipe), std::move(backend),
                    high_precision, std::move(layer)) {}

Fp8LinearImpl::Fp8LinearImpl(torch::Tensor weight_tensor, torch::Tensor bias_tensor,
                             recipes::Recipe recipe, std::shared_ptr<const LinearBackend> backend,
                             HighPrecision high_precision, std::string layer)
    : BackendLinearImpl("fp8lab::Fp8Linear", std::move(weight_tensor), std::move(bias_tensor),
                        std::move(backend), high_precision),
      recipe_(std::move(recipe)),
      layer_(std::move(layer)),
      fp8_gemms_{recipes::gemm_runs_fp8(recipe_, layer_, Gemm::kFprop),
                 recipes::gemm_runs_fp8(recipe_, layer_, Gemm::kDgrad),
                 recipes::gemm_runs_fp8(recipe_, layer_, Gemm::kWgrad)},
      dequantized_gemms_{false, recipes::runs_dequantized(recipe_, layer_, Gemm::kDgrad),
                         recipes::runs_dequantized(recipe_, layer_, Gemm::kWgrad)},
      accumulation_(recipes::gemm_accumulation(recipe_, layer_)),
      // The state holds this Linear's recipe: its per_role rules, patterns resolved (for_layer).
      state_(backend_->make_state(recipes::for_layer(recipe_, layer_))) {}

void Fp8LinearImpl::set_recipe(const recipes::Recipe* recipe) {
  if (recipe == nullptr) {
    fp8_gemms_ = {false, false, false};
    dequantized_gemms_ = {false, false, false};
    return;
  }
  recipe_ = *recipe;
  fp8_gemms_ = {recipes::gemm_runs_fp8(recipe_, layer_, Gemm::kFprop),
                recipes::gemm_runs_fp8(recipe_, layer_, Gemm::kDgrad),
                recipes::gemm_runs_fp8(recipe_, layer_, Gemm::kWgrad)};
  dequantized_gemms_ = {false, recipes::runs_dequantized(recipe_, layer_, Gemm::kDgrad),
                        recipes::runs_dequantized(recipe_, layer_, Gemm::kWgrad)};
  // As the constructor: the stage's accumulation per GEMM and its per_role rules for this Linear.
  accumulation_ = recipes::gemm_accumulation(recipe_, layer_);
  state_ = backend_->make_state(recipes::for_layer(recipe_, layer_));
}

void Fp8LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "fp8lab::Fp8Linear(in_features=" << in_features() << ", out_features=" << out_features()
         << ", bias=" << (bias.defined() ? "true" : "false")
         << (layer_.empty() ? "" : ", layer=" + layer_)
         << ", scaling=" << recipes::name(recipe_.scaling)
         << ", fp8_format=" << recipes::name(recipe_.fp8_format) << ", fp8_gemms=(" << fp8_gemms_[0]
         << ", " << fp8_gemms_[1] << ", " << fp8_gemms_[2]
         << "), high_precision=" << experiments::name(high_precision_)
         << ", backend=" << backend_->name() << ")";
}

LinearExecution Fp8LinearImpl::execution() {
  LinearExecution e;
  e.backend = backend_;
  e.high_precision = high_precision_;
  e.stats = stats_;
  const bool any_fp8 = fp8_gemms_[0] || fp8_gemms_[1] || fp8_gemms_[2];
  std::shared_ptr<Fp8AutocastRecord> record = Fp8Autocast::active_record();
  if (record && any_fp8) {
    e.state = state_;
    e.quantized = fp8_gemms_;
    e.dequantized = dequantized_gemms_;
    e.accumulation = accumulation_;
    e.first_in_region = record->add(backend_, state_);
    e.record = std::move(record);
  }
  return e;
}

}  // namespace fp8lab::experiments
