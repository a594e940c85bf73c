// Delayed scaling: TE DelayedScaling, the seed's TERecipeKwargs (docs/numerics.md §2.1,
// te-accelerate.md §2). Per Linear layer: forward slots {input, weight}, backward slot
// {grad_output}; each slot has a scale (starts at 1.0) and an amax history H[len] (starts at 0)
// whose row 0 accumulates the running step's amax. Casts use the slot's current scale; the scale
// changes only in the explicit end-of-pass updates, which reproduce TE's fused CUDA kernel
// (delayed_scaling.cu kernel_bulk, §2.6) bit for bit.
//
// Timing (§2.5): call end_of_forward() after the forward pass of a training step (TE: exit of the
// outermost autocast with grad enabled) and end_of_backward() after the backward pass (TE: end of
// the first module's backward). Both apply from the next cast on, so step 0 casts with 1.0. Eval
// passes without FP8 do not cast; with FP8 under no_grad they cast but do not update (the amax
// then merges into the next training step's row 0, as in TE §1.3).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/format.hpp"
#include "sim/scaling/common.hpp"
#include "sim/scaling/plan.hpp"

namespace fp8lab::sim::scaling {

// AmaxComputeAlgo: sim/settings.hpp. DelayedScalingConfig, with the interval rule and the scaled
// max (delayed_scaled_max): sim/scaling/plan.hpp.

// Throws std::invalid_argument naming the field and its accepted values.
void validate(const DelayedScalingConfig& config);

// Row 0 of a slot's history after a cast whose amax is `amax` (TE's atomicMaxFloat into
// amax_history[0], te-accelerate.md §2.4): fmaxf, so NaN is ignored and Inf recorded.
inline float recorded_amax(float running, float amax) { return std::fmax(running, amax); }

// TE's fused update for n slots of one pass (kernel_bulk, te-accelerate.md §2.6), in place.
//   history:  [len][n] row-major, row 0 = the running step's amax per slot
//   scale:    [n]
//   reduced:  [n] row 0 after the distributed MAX (TE's `R`), or empty when not distributed
//   recompute_scale: false keeps every scale (the `interval` rule; TE always passes true)
// Per slot j, in this order:
//   last = (reduced non-empty && reduced[j] != 0) ? reduced[j] : H[0][j]
//   amax = 0
//   if (last != 0):                         // 0 = slot unused this step: no roll, scale kept
//     for i in 0 .. len-1:
//       a = (i < len-1) ? H[i+1][j] : last
//       amax = fmaxf(amax, a)               // drops NaN; order irrelevant (fmaxf is exact)
//       H[i][j] = (i > 0) ? a : 0           // roll by -1, `last` into row len-1, row 0 zeroed
//   if algo == most_recent: amax = last
//   if recompute_scale and isfinite(amax) and amax > 0: S[j] = RN(scaled_max / amax)
//   if isinf(S[j]): S[j] = FLT_MAX
// NaN `last` (NaN != 0) rolls and is stored; with max it is then dropped by fmaxf, with
// most_recent the scale is kept. Inf keeps the scale while it stays in the window.
void fused_amax_and_scale_update(std::span<float> history, std::int64_t len, std::span<float> scale,
                                 std::span<const float> reduced, AmaxComputeAlgo algo,
                                 float scaled_max, bool recompute_scale);

// The state of one pass (TE's fp8_meta["scaling_fwd"] or ["scaling_bwd"] of one module).
class DelayedScalingState {
 public:
  DelayedScalingState(std::int64_t slots, Format format, const DelayedScalingConfig& config);

  // Cast with the slot's current scale: q = cast_satfinite(RN(x * S[slot])),
  // scale_inv = RN(1 / S[slot]); then H[0][slot] = fmaxf(H[0][slot], amax(x)) (NaN ignored,
  // Inf recorded; TE's atomicMaxFloat into amax_history[0], §2.4). The cast on `threads`
  // (quantize_per_tensor), the same bits.
  QuantizeResult quantize(std::int64_t slot, std::span<const float> x, std::int64_t rows,
                          std::int64_t cols, int threads = 1);
  // Merges an amax observed outside quantize() into row 0, as a cast would.
  void record_amax(std::int64_t slot, float amax);

  // End of this pass: reduce row 0 with `reduce` (MAX over ranks) if given, then the fused update
  // with recompute_scale = config.recomputes_scale(update_count()) (the interval rule,
  // sim/scaling/plan.hpp); then update_count() += 1.
  void update(const AmaxReducer& reduce = {});

  std::int64_t slots() const { return slots_; }
  std::int64_t history_len() const { return len_; }
  Format format() const { return format_; }
  std::int64_t update_count() const { return updates_; }
  float scale(std::int64_t slot) const;
  // H[row][slot]; row 0 is the running step, rows 1..len-1 oldest to newest.
  float history(std::int64_t row, std::int64_t slot) const;
  // Column `slot` of H, rows 0..len-1.
  std::vector<float> history_of(std::int64_t slot) const;

 private:
  std::size_t checked_slot(std::int64_t slot) const;

  std::int64_t slots_;
  std::int64_t len_;
  Format format_;
  AmaxComputeAlgo algo_;
  float scaled_max_;
  DelayedScalingConfig config_;  // its interval rule
  std::int64_t updates_ = 0;
  std::vector<float> history_;  // [len][slots]
  std::vector<float> scale_;    // [slots]
};

// The delayed-scaling state of one Linear: forward {input, weight} in the recipe's forward
// format, backward {grad_output} in its backward format (HYBRID: E4M3 / E5M2).
class DelayedScalingLinear {
 public:
  enum ForwardSlot : std::int64_t { kInput = 0, kWeight = 1 };
  enum BackwardSlot : std::int64_t { kGradOutput = 0 };

  explicit DelayedScalingLinear(const DelayedScalingConfig& config);

  // Each on `threads` as DelayedScalingState::quantize.
  QuantizeResult quantize_input(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                int threads = 1);
  QuantizeResult quantize_weight(std::span<const float> w, std::int64_t rows, std::int64_t cols,
                                 int threads = 1);
  QuantizeResult quantize_grad_output(std::span<const float> dy, std::int64_t rows,
                                      std::int64_t cols, int threads = 1);

  void end_of_forward(const AmaxReducer& reduce = {}) { forward_.update(reduce); }
  void end_of_backward(const AmaxReducer& reduce = {}) { backward_.update(reduce); }

  const DelayedScalingConfig& config() const { return config_; }
  const DelayedScalingState& forward() const { return forward_; }
  const DelayedScalingState& backward() const { return backward_; }

 private:
  DelayedScalingConfig config_;
  DelayedScalingState forward_;
  DelayedScalingState backward_;
};

}  // namespace fp8lab::sim::scaling
