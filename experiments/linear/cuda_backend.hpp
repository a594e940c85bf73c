// The `cuda` LinearBackend: the sim backend's contract (sim_backend.hpp) run on the GPU with gpu/
// kernels, giving the same bits (docs/numerics.md §4), on torch's current CUDA stream. Two paths:
// - host tensors (quantize, gemm, high_precision_gemm on host matrices): each call copies its
//   operands to the device through reused pinned memory, runs, copies its results back and
//   synchronizes once (cuda_staging.hpp: nothing allocated per call);
// - CUDA tensors (the resident path of backend.hpp): operands read and results written in place,
//   quantized operands kept on the device from quantize_resident to gemm_resident, no
//   synchronization; only statistics and the shadow check copy to the host.
// The delayed-scaling state (scales, amax histories) lives on the device and is updated by
// gpu::scaling::delayed_update (TE's fused kernel_bulk) at TE's moments, queued without a
// synchronization. docs/architecture.md, "The cuda backend's memory".
//
// Like sim's, it executes the plans of the recipe's lowering (recipes/lowering.hpp):
//   kDelayed    gpu::quantize with the slot's device scale, amax into history row 0
//   otherwise   gpu::scaling::quantize(plan, ...) (gpu/scaling/blocked.hpp), twin of
//               sim::scaling::quantize(plan, ...)
//   GEMMs       gpu::gemm (fp32_seq, hopper_split, hopper_fast), gpu::high_precision_gemm
//   backward_override dequantized: the fprop operands' codes dequantized by gpu::dequantize
//               (resident path) or sim::scaling::dequantize (host path), then
//               gpu::high_precision_gemm
//
// Accumulation `exact` has no GPU kernel: gemm() throws std::invalid_argument naming it
// (gpu::require_kernel; never a silent fall back to sim). Compiled only where CUDA is
// (FP8LAB_HAVE_CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/shadow_check.hpp"

namespace fp8lab::experiments {

// The backend a run asks for (fp8lab run/sweep --backend, --shadow-every):
//   sim          the CPU reference
//   cuda         Linears on the GPU, and the model and batches too (resident operands): fast; the
//                non-Linear ops run in LibTorch's CUDA kernels, so losses differ from sim's in
//                their last bits while every Linear call stays bit-exact (the shadow check)
//   cuda-staged  Linears on the GPU, model on the CPU (operands copied per call): slow, and the
//                whole run is bit-identical to sim's
struct BackendChoice {
  std::string name = "sim";
  std::int64_t shadow_every = 0;  // shadow-check every N-th step against sim; 0 = off
  // Threads of the sim backend's GEMMs and quantizers (fp8lab run/sweep --threads;
  // SimBackendOptions::threads). No bit depends on it (tests/sim/gemm_*_test run 1, 2 and 3
  // threads on every SIMD target, tests/sim/scaling_threads_test 1 to 8 per quantizer), so
  // it is no part of a run's id; records keep it beside their timings (throughput.threads).
  int threads = 1;
  // The run's seed, for the sim backend's draws keyed by run: the sign vectors of Tseng et al.'s
  // RHT (mx_rht) and stochastic rounding's Philox streams (SimBackendOptions::run_seed). No part
  // of a run's id (its seed already is).
  std::uint64_t run_seed = 0;

  // Whether the model and its batches live on the GPU ("cuda"). Such runs are numerically
  // distinct from CPU-trained ones and are filed under their own ids (run_ids.hpp).
  bool trains_on_cuda() const { return name == "cuda"; }
};

// The most threads a run may ask for (--threads): far above any core count this code has met,
// low enough that a typo (--threads 100000) is refused instead of starting a thread per unit.
inline constexpr int kMaxRunThreads = 256;

// Throws std::invalid_argument naming the option and its accepted values: an unknown name, a
// negative shadow_every, threads outside 1..kMaxRunThreads. Needs no device.
void validate(const BackendChoice& choice);

// The backend of a choice (validate()d first): sim or cuda, wrapped in a ShadowCheckedBackend
// (shadow_check.hpp; read its report through dynamic_cast) when shadow_every > 0. sim watched by
// sim rehearses the check's plumbing without a GPU (0 mismatches by construction). Throws
// std::runtime_error for cuda in a build without CUDA or on a machine without a device.
std::shared_ptr<const LinearBackend> make_backend(const BackendChoice& choice);

}  // namespace fp8lab::experiments

#if FP8LAB_HAVE_CUDA

namespace fp8lab::experiments {

struct CudaStaging;  // cuda_staging.hpp

class CudaBackend final : public LinearBackend {
 public:
  // Throws std::runtime_error with gpu::query_device()'s reason when there is no usable device.
  CudaBackend();
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  FP8LAB_LINEAR_BACKEND_HOST_PATH;

  // The resident path (backend.hpp): x, out and high-precision operands in cuda memory, read and
  // written in place on torch's current CUDA stream with no synchronization; quantized operands
  // in LibTorch's caching allocator until their last user lets go.
  bool accepts(MemorySpace) const override { return true; }
  std::shared_ptr<const ResidentOperand> quantize_resident(LinearScalingState& state,
                                                           Operand tensor, Gemm role,
                                                           ConstMatrix x) const override;
  void gemm_resident(Gemm role, const ResidentOperand& a, const ResidentOperand& b,
                     recipes::Accumulation accumulation, MutableMatrix out) const override;
  std::vector<float> to_host(ConstMatrix x) const override;
  // gpu::dequantize (gpu/dequantize.hpp) on torch's current stream, no synchronization.
  void dequantize_resident(const ResidentOperand& operand, MutableMatrix out) const override;

  // The device state copied to the host (blocking), or a snapshot with history_len == 0 when the
  // state's recipe is not delayed scaling. Throws
  // std::invalid_argument for a state made by another backend.
  static DelayedStateSnapshot delayed_snapshot(const LinearScalingState& state);

 private:
  // Reused device and pinned host memory; one call at a time (cuda_staging.hpp).
  std::unique_ptr<CudaStaging> staging_;
};

}  // namespace fp8lab::experiments

#endif  // FP8LAB_HAVE_CUDA
