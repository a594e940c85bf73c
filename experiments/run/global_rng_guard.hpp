// Restores the global CPU generator's state when it goes out of scope. Building a model draws
// from it (LibTorch's default initialisation, before a workload's own generator overwrites the
// weights): what a run builds beside its own model (the probes, probe_engine.hpp) must leave the
// run's draws as they would be without it.
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace fp8lab::experiments {

class GlobalRngGuard {
 public:
  GlobalRngGuard() : generator_(at::detail::getDefaultCPUGenerator()) {
    state_ = generator_.get_state();
  }
  ~GlobalRngGuard() { generator_.set_state(state_); }
  GlobalRngGuard(const GlobalRngGuard&) = delete;
  GlobalRngGuard& operator=(const GlobalRngGuard&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

}  // namespace fp8lab::experiments
