// The shadow check: a LinearBackend that runs another backend (the cuda one) and, on every N-th
// training step, replays each call through the sim backend (the reference, docs/numerics.md §4) with
// the same inputs and the same state, comparing every code byte, scale, scale_inv, E8M0 code,
// statistic, amax-history entry and GEMM output bit for bit. Mismatches are counted per
// layer / tensor / kind and the first few are kept with bits and values; the run record carries
// the report (docs/results-schema.md). Nothing is corrected: the watched backend's results are
// what training uses, so a mismatch is reported, never hidden.
//
// Replay, per call, on a shadowed step:
//   quantize         the watched backend's delayed state is read before the call; sim replays the
//                    cast with that slot's scale (sim::scaling::quantize_per_tensor, the cast of
//                    DelayedScalingState::quantize) and the fmax into history row 0; stateless
//                    recipes go through SimBackend::quantize. Result and whole state compared.
//   gemm             SimBackend::gemm on the same quantized operands; output compared.
//   high precision   SimBackend::high_precision_gemm on the same operands; output compared.
//   end_forward /    sim::scaling::fused_amax_and_scale_update on the state read before the call
//   end_backward     (recompute_scale by the `interval` rule); every history entry and scale.
//
// Steps: a state's step is the number of end_backward calls it has seen (one per training step,
// TE's backward update moment); GEMMs use the largest step over all states (all GEMMs of a step
// run before its end_backward calls). A model without FP8 Linears stays at step 0: with
// --shadow-every N every call is checked.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/sim_backend.hpp"

namespace fp8lab::experiments {

// A host copy of one Linear's delayed-scaling state; history_len == 0 for other recipes.
struct DelayedStateSnapshot {
  std::int64_t history_len = 0;
  std::vector<float> forward_history;   // [len][2] row-major (slots input, weight)
  std::vector<float> forward_scale;     // [2]
  std::vector<float> backward_history;  // [len][1]
  std::vector<float> backward_scale;    // [1]
  std::int64_t forward_updates = 0;     // end_forward calls so far (the `interval` rule)
  std::int64_t backward_updates = 0;
};

// The snapshot of a state made by the watched backend (CudaBackend::delayed_snapshot).
using DelayedSnapshotFn = std::function<DelayedStateSnapshot(const LinearScalingState&)>;

// The snapshot of a state made by SimBackend (the watched backend of `--backend sim
// --shadow-every N`, a rehearsal of the check's plumbing that must count 0 mismatches).
DelayedStateSnapshot sim_delayed_snapshot(const LinearScalingState& state);

struct ShadowReport {
  std::int64_t every = 0;       // shadowed steps: step % every == 0
  std::int64_t operations = 0;  // calls replayed through sim
  std::int64_t compared = 0;    // values compared (codes, scales, statistics, history, outputs)
  std::int64_t mismatches = 0;
  // "layer|tensor|kind" -> mismatches; layer "linear#k" (k-th state made), "high_precision" for
  // GEMMs without quantized operands; tensor e.g. "input/fprop", "fprop" (GEMM output),
  // "forward" (forward pass state), "dequantized" (dequantize_resident); kind: code, scale,
  // scale_inv, e8m0, stats, history, output, dequantized, shape.
  std::map<std::string, std::int64_t> by_key;
  std::vector<std::string> first;  // the first mismatches, with bits and values
};

nlohmann::json to_json(const ShadowReport& report);

struct ShadowOptions {
  std::int64_t every = 1;       // >= 1
  std::size_t keep_first = 16;  // mismatches kept with bits and values
};

class ShadowCheckedBackend final : public LinearBackend {
 public:
  // Throws std::invalid_argument for a null backend or snapshot, or every < 1.
  ShadowCheckedBackend(std::shared_ptr<const LinearBackend> watched, DelayedSnapshotFn snapshot,
                       ShadowOptions options = {});

  std::string_view name() const override { return watched_->name(); }
  FP8LAB_LINEAR_BACKEND_HOST_PATH;

  // The resident path when the watched backend has one; shadowed steps copy the operands and
  // results to the host (watched to_host / ResidentOperand::to_host) and replay them as above.
  bool accepts(MemorySpace memory) const override { return watched_->accepts(memory); }
  std::shared_ptr<const ResidentOperand> quantize_resident(LinearScalingState& state,
                                                           Operand tensor, Gemm role,
                                                           ConstMatrix x) const override;
  void gemm_resident(Gemm role, const ResidentOperand& a, const ResidentOperand& b,
                     recipes::Accumulation accumulation, MutableMatrix out) const override;
  std::vector<float> to_host(ConstMatrix x) const override { return watched_->to_host(x); }
  // Shadowed steps compare `out` with sim::scaling::dequantize of the operand's host copy, bit for
  // bit but for a NaN's bits (gpu/dequantize.hpp: any NaN equals any NaN; kind "dequantized").
  void dequantize_resident(const ResidentOperand& operand, MutableMatrix out) const override;

  ShadowReport report() const;

 private:
  void end_pass(LinearScalingState& state, bool forward) const;
  // Notes the layer whose GEMMs follow; true when the state's step is shadowed.
  bool begin_quantize(LinearScalingState& state) const;
  DelayedStateSnapshot delayed_before(LinearScalingState& state) const;
  // Replays one quantize of host_x through sim and compares result and state with `got`.
  void check_quantize(LinearScalingState& state, Operand tensor, Gemm role, ConstMatrix host_x,
                      const sim::scaling::QuantizeResult& got,
                      const DelayedStateSnapshot& before) const;
  // The latest quantize's layer; true when GEMMs of the current step are shadowed.
  bool shadowed_gemm(std::string& layer) const;
  void compare_output(const std::string& layer, Gemm role, std::span<const float> got,
                      std::span<const float> want) const;

  std::shared_ptr<const LinearBackend> watched_;
  DelayedSnapshotFn snapshot_;
  ShadowOptions options_;
  SimBackend reference_;
  mutable std::mutex mutex_;
  mutable ShadowReport report_;
  mutable std::int64_t states_made_ = 0;
  mutable std::int64_t step_ = 0;   // largest step over all states
  mutable std::string gemm_layer_;  // the layer of the latest quantize (its GEMMs follow)
};

}  // namespace fp8lab::experiments
