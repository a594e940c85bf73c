// FP8 autocast regions: when FP8 Linears quantize, and when their scaling states update.
// TE's fp8_autocast / te.autocast and accelerate's contextual_fp8_autocast (te-accelerate.md §1.3,
// §2.5), as RAII guards:
//
//   {
//     ContextualFp8Autocast fp8(*model, recipe.use_autocast_during_eval);  // seed API's wrapper
//     auto loss = model->loss(batch);
//   }                        // <- forward scales update here (outermost exit, grad enabled)
//   loss.backward();         // <- backward scales update at the end of the first FP8 Linear's
//                            //    backward, i.e. after the last FP8 backward of the step
//
// - An Fp8Linear quantizes only inside a region whose innermost guard is enabled; elsewhere (no
//   guard, a disabled guard, eval by default) it runs the high-precision GEMMs and records nothing.
// - On exit of the outermost guard, if it is enabled and torch's grad mode is on, every FP8 Linear
//   that ran in the region updates its forward scales (input, weight) once; they apply from the
//   next forward. Under no_grad nothing updates: with use_autocast_during_eval an eval pass still
//   records amaxes, which merge (max) into the next training step's (te-accelerate.md §1.3).
// - The first FP8 Linear of the region (in forward order) updates, at the end of its backward, the
//   backward scales (grad_output) of every FP8 Linear of the region (TE's is_first_fp8_module).
// - First step: every delayed scale is 1.0 (TE has no warm-up).
// Difference from TE, by design: TE's update walks a process-wide list of every module that ever
// registered; here it covers the Linears that ran in the region. They differ only for a Linear that
// recorded amaxes in an FP8 eval pass and then sat out a training step: its amaxes wait for the
// next step it runs in, and its history does not roll meanwhile (TE would not roll it either:
// an amax of 0 rolls nothing, §2.6).
//
// Regions are per thread (like TE's global state per process); nest freely.
#pragma once

#include <memory>
#include <vector>

#include "experiments/linear/backend.hpp"

namespace torch::nn {
class Module;
}

namespace fp8lab::experiments {

// The FP8 Linears that ran in one outermost region, in forward order.
class Fp8AutocastRecord {
 public:
  // Adds a Linear's state once (a Linear called twice appears once). Returns true when this is the
  // region's first FP8 Linear call, whose backward must call end_backward().
  bool add(std::shared_ptr<const LinearBackend> backend, std::shared_ptr<LinearScalingState> state);
  void end_forward() const;
  void end_backward() const;
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::shared_ptr<const LinearBackend> backend;
    std::shared_ptr<LinearScalingState> state;
  };
  std::vector<Entry> entries_;
  bool any_call_ = false;
};

class Fp8Autocast {
 public:
  explicit Fp8Autocast(bool enabled);
  // Runs the forward update (see above), unless an exception is unwinding through the region.
  ~Fp8Autocast() noexcept(false);
  Fp8Autocast(const Fp8Autocast&) = delete;
  Fp8Autocast& operator=(const Fp8Autocast&) = delete;

  bool enabled() const { return enabled_; }

  // The record FP8 Linears register with, or nullptr when FP8 is off at this point of this thread
  // (no region, or the innermost guard is disabled).
  static std::shared_ptr<Fp8AutocastRecord> active_record();

 private:
  bool enabled_;
  Fp8Autocast* outer_;
  std::shared_ptr<Fp8AutocastRecord> record_;  // owned by the outermost guard
};

// accelerate's contextual_fp8_autocast: FP8 on when `use_autocast_during_eval` or the model is in
// training mode (model.is_training()), so eval passes run without FP8 by default.
class ContextualFp8Autocast : public Fp8Autocast {
 public:
  ContextualFp8Autocast(const torch::nn::Module& model, bool use_autocast_during_eval);
};

}  // namespace fp8lab::experiments
