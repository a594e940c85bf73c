// BackendLinearImpl: the common base of Fp8LinearImpl (fp8_linear.hpp) and HighPrecisionLinearImpl
// (high_precision_linear.hpp), the two Linears convert_model puts in a model. Both hold a weight
// [out_features, in_features] and an optional bias [out_features] (float32), take input
// [..., in_features] float32 (leading dimensions are folded into GEMM rows and restored), run their
// GEMMs through a LinearBackend and keep LinearStats (linear_stats.hpp).
//
// Call a converted model's Linear through this base (e.g. dynamic_cast<BackendLinearImpl*>).
#pragma once

#include <torch/nn/module.h>

#include <memory>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/linear_function.hpp"
#include "experiments/linear/linear_stats.hpp"

namespace torch::nn {
class LinearImpl;
}

namespace fp8lab::experiments {

class BackendLinearImpl : public torch::nn::Module {
 public:
  torch::Tensor forward(const torch::Tensor& input);

  std::int64_t in_features() const { return weight.size(1); }
  std::int64_t out_features() const { return weight.size(0); }
  const LinearBackend& backend() const { return *backend_; }
  HighPrecision high_precision() const { return high_precision_; }

  // Statistics merged over every forward and backward since the last reset (linear_stats.hpp).
  const LinearStats& stats() const { return *stats_; }
  void reset_stats() { *stats_ = LinearStats{}; }
  // Whether quantizations measure their operands into stats() (LinearExecution::
  // measure_operands; default true). A runner turns it off on steps whose statistics it skips.
  void set_measure_operands(bool on) { measure_operands_ = on; }
  // Other recipes measured on this Linear's tensors (LinearExecution::what_if); null: none.
  void set_what_if(std::shared_ptr<const WhatIfRecipes> what_if) { what_if_ = std::move(what_if); }
  // The run's first-non-finite watch for this Linear (non_finite.hpp); null (the default): none.
  void set_watch(std::shared_ptr<LayerWatch> watch) { watch_ = std::move(watch); }
  // The per-step null's operand noise (operand_noise.hpp); null (the default): none. Only the
  // high-precision Linear applies it.
  void set_noise(std::shared_ptr<OperandNoise> noise) { noise_ = std::move(noise); }
  const OperandNoise* noise() const { return noise_.get(); }
  // The probes' RHT measurement of the wgrad operands (LinearExecution::rht_probe); null: none.
  void set_rht_probe(std::shared_ptr<RhtOperandProbe> probe) { rht_probe_ = std::move(probe); }

  torch::Tensor weight;
  torch::Tensor bias;  // undefined when the Linear has none

 protected:
  // Registers `weight` and `bias` (the very tensors given, not copies, so that an optimizer built
  // before conversion keeps updating the converted model's parameters).
  BackendLinearImpl(const std::string& module_name, torch::Tensor weight, torch::Tensor bias,
                    std::shared_ptr<const LinearBackend> backend, HighPrecision high_precision);

  // How this call runs (the derived class decides FP8 or not).
  virtual LinearExecution execution() = 0;

  std::shared_ptr<const LinearBackend> backend_;
  HighPrecision high_precision_;
  std::shared_ptr<LinearStats> stats_ = std::make_shared<LinearStats>();
  bool measure_operands_ = true;
  std::shared_ptr<const WhatIfRecipes> what_if_;
  std::shared_ptr<LayerWatch> watch_;
  std::shared_ptr<OperandNoise> noise_;
  std::shared_ptr<RhtOperandProbe> rht_probe_;
};

}  // namespace fp8lab::experiments
