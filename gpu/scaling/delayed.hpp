// Delayed scaling on the GPU (docs/numerics.md §2.1, te-accelerate.md §2.6): TE's fused amax-history
// and scale update for every layer's slots in one launch (TE kernel_bulk).
//
//   gpu::scaling::delayed_update must equal sim::scaling::fused_amax_and_scale_update applied to
//   each group (bit for bit: every history entry and every scale).
//
// The casts of delayed scaling are gpu::quantize with `scale` = &S[slot], `out.amax` =
// &H[0][slot] (TE's atomicMaxFloat into history row 0) and out.scale_inv (RN(1 / S[slot])).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace fp8lab::gpu::scaling {

// One pass of one module (TE fp8_meta["scaling_fwd"] or ["scaling_bwd"]), all device pointers.
struct DelayedUpdateGroup {
  float* history = nullptr;        // [len][slots] row-major; row 0 = the running step's amax
  float* scale = nullptr;          // [slots]
  const float* reduced = nullptr;  // [slots] row 0 after the distributed MAX (TE's R), or null
  std::int64_t slots = 0;          // >= 1
  std::int64_t len = 0;            // amax_history_len, >= 1 (no upper limit)
  float scaled_max = 0.0f;         // sim::scaling::delayed_scaled_max(fp8_max, margin)
  bool most_recent = false;        // amax_compute_algo: most_recent (true) or max (false)
  bool recompute_scale = true;     // the `interval` rule; TE always recomputes
};

// Updates every group; one kernel launch per kMaxDelayedGroupsPerLaunch groups. Throws
// std::invalid_argument naming the group and field for a null pointer, slots < 1 or len < 1.
inline constexpr int kMaxDelayedGroupsPerLaunch = 48;
void delayed_update(const std::vector<DelayedUpdateGroup>& groups, cudaStream_t stream = nullptr);

}  // namespace fp8lab::gpu::scaling
