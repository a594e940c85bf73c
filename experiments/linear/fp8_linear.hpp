// Fp8LinearImpl: a Linear whose three GEMMs run in FP8 through a LinearBackend, as TE's te.Linear
// under a recipe (te-accelerate.md §2, docs/numerics.md §2-3). Usually made by convert_model
// (convert_model.hpp); usable alone:
//
//   auto backend = std::make_shared<SimBackend>();
//   Fp8Linear fc(*torch_linear, recipe, backend, HighPrecision::fp32);
//   { Fp8Autocast fp8(true); y = fc(x); }   // forward scales update here
//   y.sum().backward();                      // backward scales update at the end of this
//
// Per call:
// - Inside an enabled FP8 autocast region (autocast.hpp), each GEMM whose recipe override is
//   false runs on quantized operands: fprop Q(x)·Q(W)ᵀ, dgrad Q(dY)·Q(W), wgrad Q(dY)ᵀ·Q(x), with
//   the recipe's accumulation model for that GEMM (recipe.gemm). x and W are quantized in forward
//   with the forward scales (also their dgrad/wgrad copies), dY in backward with the backward
//   scales. A GEMM with override true (and wgrad under Scaling::rowwise_with_gw_hp) runs the
//   backend's high-precision GEMM on the unquantized operands instead. Under backward_override
//   dequantized (recipes::runs_dequantized), dgrad and wgrad run the high-precision GEMM on the
//   fprop GEMM's Q(W) and Q(x) dequantized, with dY unquantized (TE's linear.py).
// - Outside a region, or in a disabled one (eval by default), all three GEMMs run in high
//   precision and nothing is quantized or recorded: the outputs are those of HighPrecisionLinear.
// - The scaling state is this Linear's own (one per layer, as TE's fp8_meta); the region decides
//   when it updates (autocast.hpp).
#pragma once

#include <array>
#include <string>

#include <torch/nn/pimpl.h>

#include "experiments/linear/backend_linear.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

// Whether a recipe runs a GEMM on quantized operands: recipes::gemm_runs_fp8 (lowering.hpp).

class Fp8LinearImpl : public BackendLinearImpl {
 public:
  // Holds source's weight and bias tensors themselves (see BackendLinearImpl); a fresh scaling
  // state from backend->make_state(recipe). `layer` is the Linear's fully qualified name in its
  // model, which the recipe's keep_high_precision patterns match (recipes::gemm_runs_fp8).
  Fp8LinearImpl(const torch::nn::LinearImpl& source, recipes::Recipe recipe,
                std::shared_ptr<const LinearBackend> backend, HighPrecision high_precision,
                std::string layer = {});
  Fp8LinearImpl(torch::Tensor weight, torch::Tensor bias, recipes::Recipe recipe,
                std::shared_ptr<const LinearBackend> backend, HighPrecision high_precision,
                std::string layer = {});

  const recipes::Recipe& recipe() const { return recipe_; }
  const std::string& layer() const { return layer_; }
  // Whether `gemm` runs on quantized operands now.
  bool runs_fp8(Gemm gemm) const { return fp8_gemms_[static_cast<std::size_t>(gemm)]; }
  // Whether `gemm` (dgrad or wgrad) runs in high precision on the fprop codes dequantized now
  // (backward_override dequantized: recipes::runs_dequantized).
  bool runs_dequantized(Gemm gemm) const {
    return dequantized_gemms_[static_cast<std::size_t>(gemm)];
  }
  // Moves `gemm` to high precision from the next call on (the recipe's autoswitch rule,
  // autoswitch.hpp); the scaling state is kept, as the other GEMMs still use it.
  // (A switched fprop leaves no codes for backward_override dequantized: its GEMMs then read the
  // unquantized operands.)
  void switch_to_high_precision(Gemm gemm) {
    fp8_gemms_[static_cast<std::size_t>(gemm)] = false;
    if (gemm == Gemm::kFprop) dequantized_gemms_ = {false, false, false};
  }
  // A precision schedule's switch (recipes/schedule.hpp, experiments/run/schedule_run.hpp):
  // from the next call on, `recipe`'s GEMMs (recipes::gemm_runs_fp8 for this layer) with a fresh
  // scaling state from the backend; nullptr: every GEMM in high precision, the state kept.
  void set_recipe(const recipes::Recipe* recipe);
  // This layer's scaling state, for the backend that made it (e.g. SimBackend::delayed_state).
  LinearScalingState& scaling_state() { return *state_; }
  const LinearScalingState& scaling_state() const { return *state_; }

  // Declared here (not only inherited) so that torch::nn::AnyModule and Sequential::ptr<Fp8LinearImpl>
  // see this class as the module's type.
  torch::Tensor forward(const torch::Tensor& input) { return BackendLinearImpl::forward(input); }

  void pretty_print(std::ostream& stream) const override;

 protected:
  LinearExecution execution() override;

 private:
  recipes::Recipe recipe_;
  std::string layer_;
  std::array<bool, 3> fp8_gemms_;
  std::array<bool, 3> dequantized_gemms_;   // recipes::runs_dequantized(recipe_, layer_, gemm)
  recipes::GemmAccumulation accumulation_;  // recipes::gemm_accumulation(recipe_, layer_)
  std::shared_ptr<LinearScalingState> state_;
};

// The module holder (std::shared_ptr semantics), as torch::nn::Linear for LinearImpl.
TORCH_MODULE(Fp8Linear);

}  // namespace fp8lab::experiments
