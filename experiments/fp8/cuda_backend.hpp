// The `cuda` LinearBackend: the sim backend's contract (sim_backend.hpp) run on the GPU with gpu/
// kernels, giving the same bits (NUMERICS.md §4), on torch's current CUDA stream. Two paths:
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
//   scaling     GPU quantizer (gpu/scaling/blocked.hpp, gpu/quantize.hpp), twin of sim's
//   delayed     gpu::quantize with the slot's device scale, amax into history row 0
//   current     gpu::scaling::quantize_current_te
//   tensorwise  gpu::scaling::quantize_tensorwise_torchao
//   rowwise*    quantize_tensorwise_torchao / quantize_axiswise_torchao, torchao's table
//   block       gpu::scaling::quantize_block_te, blocks as sim::scaling::quantize_block_operand
//   mxfp8       gpu::scaling::quantize_mx, 1x32 / 32x1 along the GEMM's K, mode and torchao version
//   GEMMs       gpu::gemm (fp32_seq, hopper_split, hopper_fast), gpu::high_precision_gemm
//
// Accumulation `exact` has no GPU kernel: gemm() throws std::invalid_argument naming it (never a
// silent fall back to sim). Compiled only where CUDA is (FP8LAB_HAVE_CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "experiments/fp8/backend.hpp"
#include "experiments/fp8/shadow_check.hpp"

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

  // Whether the model and its batches live on the GPU ("cuda"). Such runs are numerically
  // distinct from CPU-trained ones and are filed under their own ids (run_ids.hpp).
  bool trains_on_cuda() const { return name == "cuda"; }
};

// Throws std::invalid_argument naming the option and its accepted values: an unknown name or a
// negative shadow_every. Needs no device.
void validate(const BackendChoice& choice);

// The backend of a choice (validate()d first): sim or cuda, wrapped in a ShadowCheckedBackend
// (shadow_check.hpp; read its report through dynamic_cast) when shadow_every > 0. sim watched by
// sim rehearses the check's plumbing without a GPU (0 mismatches by construction). Throws
// std::runtime_error for cuda in a build without CUDA or on a machine without a device.
std::shared_ptr<const LinearBackend> make_backend(const BackendChoice& choice);

}  // namespace fp8lab::experiments

#if FP8LAB_HAVE_CUDA

#include <utility>

#include "gpu/gemm/gemm.hpp"
#include "gpu/scaling/blocked.hpp"

namespace fp8lab::experiments {

// How one stateless quantize runs on the GPU: the gpu/scaling quantizer, its blocks and
// parameters, chosen as SimBackend chooses sim's (sim_backend.hpp's table). Public so that tests
// can run a plan through gpu/'s host twins and compare it with SimBackend without a device.
struct GpuQuantizePlan {
  enum class Quantizer : std::uint8_t { current_te, tensorwise_torchao, axiswise_torchao, block_te, mx };
  Quantizer quantizer = Quantizer::current_te;
  sim::Format format = sim::Format::E4M3;
  std::int64_t block_rows = 0;  // of the result's scales
  std::int64_t block_cols = 0;
  bool rowwise = true;  // axiswise: one scale per row (else per column)
  bool pow2 = false;
  gpu::scaling::MxMode mx_mode = gpu::scaling::MxMode::kTe;
  gpu::scaling::MxTorchao mx_torchao = gpu::scaling::MxTorchao::kV0_18;
};

// Throws std::invalid_argument for delayed scaling (stateful: CudaBackend::quantize) and for an
// operand a recipe keeps in high precision.
GpuQuantizePlan plan_quantize(const recipes::Recipe& recipe, LinearTensor tensor, GemmRole role,
                              std::int64_t rows, std::int64_t cols);
// Runs a plan on x [rows, cols]: over device pointers, or with on_host through the host twins
// (gpu/scaling/host_twin.cu) over host pointers.
void run_quantize_plan(const GpuQuantizePlan& plan, const float* x, std::int64_t rows,
                       std::int64_t cols, const gpu::scaling::BlockedOutputs& out, bool on_host,
                       cudaStream_t stream = nullptr);
// The GEMM model of an accumulation (std::invalid_argument for `exact`: no GPU kernel), and
// whether K is the columns of operands a and b of a GEMM role (backend.hpp's table).
gpu::GemmModel gemm_model(recipes::Accumulation accumulation);
std::pair<bool, bool> gemm_k_is_cols(GemmRole role);

struct CudaStaging;  // cuda_staging.hpp

class CudaBackend final : public LinearBackend {
 public:
  // Throws std::runtime_error with gpu::query_device()'s reason when there is no usable device.
  CudaBackend();
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& recipe) const override;
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, LinearTensor tensor,
                                        GemmRole role, ConstMatrix x) const override;
  void gemm(GemmRole role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
            recipes::Accumulation accumulation, MutableMatrix out) const override;
  void high_precision_gemm(GemmRole role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
                           MutableMatrix out) const override;
  void end_forward(LinearScalingState& state) const override;
  void end_backward(LinearScalingState& state) const override;

  // The resident path (backend.hpp): x, out and high-precision operands in cuda memory, read and
  // written in place on torch's current CUDA stream with no synchronization; quantized operands
  // in LibTorch's caching allocator until their last user lets go.
  bool accepts(MemorySpace) const override { return true; }
  std::shared_ptr<const ResidentOperand> quantize_resident(LinearScalingState& state,
                                                           LinearTensor tensor, GemmRole role,
                                                           ConstMatrix x) const override;
  void gemm_resident(GemmRole role, const ResidentOperand& a, const ResidentOperand& b,
                     recipes::Accumulation accumulation, MutableMatrix out) const override;
  std::vector<float> to_host(ConstMatrix x) const override;

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
