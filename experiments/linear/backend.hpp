// The FP8 Linear's backend: where its operands are quantized, its three GEMMs run and its scaling
// state updates. `sim` (sim_backend.hpp) is the CPU reference; a `cuda` backend implements the
// same interface over gpu/ and must return the same bits (docs/numerics.md §4).
//
// No LibTorch here: operands are row-major fp32 buffers and sim::QuantizedTensor. A Linear with
// input X [M, K], weight W [N, K] and output Y [M, N] runs, in TE's operand order
// (te-accelerate.md §4.2 table):
//
//   GEMM    a             b            out                 K (the reduction dimension)
//   fprop   X  [M, K]     W  [N, K]    Y  = X · Wᵀ [M, N]   K = in_features
//   dgrad   dY [M, N]     W  [N, K]    dX = dY · W [M, K]   N = out_features
//   wgrad   dY [M, N]     X  [M, K]    dW = dYᵀ · X [N, K]  M = rows (tokens)
//
// A scaling with more than one scale per tensor (rowwise, block, MXFP8) quantizes each operand
// along its GEMM's K, so X, W and dY each get one quantization per GEMM that reads them; the
// `role` argument of quantize() says which. Per-tensor scalings return the same bytes for both.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/recipe.hpp"
#include "sim/scaling/common.hpp"
#include "sim/settings.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::experiments {

// The GEMMs of a Linear and the three tensors that scaling recipes quantize (TE's slots: forward
// input and weight, backward grad_output; te-accelerate.md §2.3) are sim's types
// (sim/settings.hpp), imported by name.
using sim::scaling::Gemm;
using sim::scaling::Operand;
// Operand precision of the high-precision GEMM (docs/numerics.md §3): fp32 as given, or each operand
// rounded RN to bf16 first; fp32 accumulation in the fp32_seq order either way. The baseline's
// choice, a workload option.
enum class HighPrecision : std::uint8_t { fp32, bf16 };

inline std::string_view name(Gemm role) { return sim::scaling::to_string(role); }
inline std::string_view name(Operand tensor) { return sim::scaling::to_string(tensor); }
std::string_view name(HighPrecision precision);

// Where a matrix's elements live. `cuda`: memory of the current CUDA device, whose span host code
// never dereferences; only a backend with accepts(MemorySpace::cuda) takes such matrices.
enum class MemorySpace : std::uint8_t { host, cuda };

// A row-major [rows, cols] fp32 matrix; data.size() == rows * cols.
struct ConstMatrix {
  std::span<const float> data;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  MemorySpace memory = MemorySpace::host;
};
struct MutableMatrix {
  std::span<float> data;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  MemorySpace memory = MemorySpace::host;
};

// An operand quantized by LinearBackend::quantize_resident and kept in the backend's own (device)
// memory until gemm_resident reads it; only the backend that made it reads it.
class ResidentOperand {
 public:
  virtual ~ResidentOperand() = default;
  // The operand and its statistics on the host in sim's layout (blocking): what quantize() would
  // have returned. For statistics and the shadow check only.
  virtual sim::scaling::QuantizeResult to_host() const = 0;
};

// One Linear's scaling state (delayed scaling: scales and amax histories of its three tensors;
// stateless scalings keep only the recipe). Made by, and only meaningful to, one backend.
class LinearScalingState {
 public:
  virtual ~LinearScalingState() = default;
};

class LinearBackend {
 public:
  virtual ~LinearBackend() = default;
  virtual std::string_view name() const = 0;

  // A fresh state for one Linear under `recipe` (delayed: every scale 1.0, histories 0).
  virtual std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& recipe) const = 0;

  // Quantizes `x` (the Linear's `tensor`) as operand of `role`, with the state's current scale
  // (delayed: and records its amax into the state's current-step slot, TE's history row 0).
  virtual sim::scaling::QuantizeResult quantize(LinearScalingState& state, Operand tensor,
                                                Gemm role, ConstMatrix x) const = 0;

  // Whether quantize(state, tensor, second, x), called right after quantize(state, tensor, first,
  // x) on the same unmodified x, returns that result bit for bit and leaves the state as the first
  // call left it, so that the caller may use the first result for both roles (a per-tensor scaling
  // quantizes x, W and dY alike for their two GEMMs). This default says no: each role quantizes.
  virtual bool quantizes_alike(const LinearScalingState& /*state*/, Operand /*tensor*/,
                               Gemm /*first*/, Gemm /*second*/) const {
    return false;
  }

  // out = the `role` GEMM of two operands quantized for that role (table above), summed with the
  // accumulation model `accumulation`. out must have the output shape of the table.
  virtual void gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
                    recipes::Accumulation accumulation, MutableMatrix out) const = 0;

  // The same GEMM on unquantized operands: the deterministic high-precision GEMM of docs/numerics.md §3
  // (baseline Linears, overridden GEMMs, FP8 Linears outside an FP8 autocast region).
  virtual void high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
                                   MutableMatrix out) const = 0;

  // Runs independent calls of this backend (GEMMs with disjoint outputs, operands only read; no
  // quantize, whose scaling state they would share), each given the backend to call: the
  // backward pass's dgrad and wgrad. A backend with threads to spare may run them at once, each
  // on a part of its threads, as one parallel region instead of a split of each small GEMM; this
  // default runs them in order on *this. No bit depends on which (every GEMM's bits are
  // independent of its thread count).
  using Call = std::function<void(const LinearBackend&)>;
  virtual void run_independent(std::span<const Call> calls) const {
    for (const Call& call : calls) call(*this);
  }

  // TE's update moments (te-accelerate.md §2.5-2.6, docs/numerics.md §2.1): forward scales (input,
  // weight) after the forward pass of a training step, backward scales (grad_output) after the
  // backward pass. A stateless scaling does nothing.
  virtual void end_forward(LinearScalingState& state) const = 0;
  virtual void end_backward(LinearScalingState& state) const = 0;

  // Sets `to`'s history-dependent scaling state (delayed scaling's scales and amax histories) to
  // `from`'s, both made by this backend for recipes of the same scaling: an on-trajectory probe's
  // per-GEMM variants start each probe step where the probed recipe is (run/probe_engine.hpp).
  // A backend that cannot copy its states keeps this default, which refuses by name.
  virtual void copy_state(const LinearScalingState& /*from*/, LinearScalingState& /*to*/) const {
    throw std::logic_error("LinearBackend " + std::string(name()) +
                           ": copy_state is not built for this backend (sim has it)");
  }

  // The resident path, for a Linear whose tensors live in `cuda` memory: operands read and
  // results written in place, quantized operands kept on the device from quantize to GEMM, nothing
  // copied to the host unless asked (to_host). high_precision_gemm takes cuda matrices too when
  // accepts(cuda). A backend without the path (sim) keeps these defaults, which refuse by name.
  virtual bool accepts(MemorySpace memory) const { return memory == MemorySpace::host; }
  // As quantize(), with x in cuda memory.
  virtual std::shared_ptr<const ResidentOperand> quantize_resident(LinearScalingState& /*state*/,
                                                                   Operand /*tensor*/,
                                                                   Gemm /*role*/,
                                                                   ConstMatrix /*x*/) const {
    throw std::logic_error(no_resident_path("quantize_resident"));
  }
  // As gemm(), on operands this backend's quantize_resident made, out in cuda memory.
  virtual void gemm_resident(Gemm /*role*/, const ResidentOperand& /*a*/,
                             const ResidentOperand& /*b*/, recipes::Accumulation /*accumulation*/,
                             MutableMatrix /*out*/) const {
    throw std::logic_error(no_resident_path("gemm_resident"));
  }
  // A cuda matrix's elements on the host (blocking): the shadow check's replay.
  virtual std::vector<float> to_host(ConstMatrix /*x*/) const {
    throw std::logic_error(no_resident_path("to_host"));
  }
  // sim::scaling::dequantize(operand.to_host().tensor) written into `out` (cuda memory, the
  // operand's shape), without a copy to the host: backward_override dequantized on the resident
  // path (linear_function.cpp) reads the fprop GEMM's codes this way.
  virtual void dequantize_resident(const ResidentOperand& /*operand*/,
                                   MutableMatrix /*out*/) const {
    throw std::logic_error(no_resident_path("dequantize_resident"));
  }

 private:
  std::string no_resident_path(const char* call) const {
    return "LinearBackend " + std::string(name()) + ": " + call +
           ": this backend takes host memory only (accepts(MemorySpace::cuda) is false)";
  }
};

// The declarations of LinearBackend's pure virtual host path (all but name()), which every
// backend overrides: one list, so that a change of the interface is one edit of the backends'
// headers, not one per backend.
#define FP8LAB_LINEAR_BACKEND_HOST_PATH                                                         \
  std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& recipe) const override; \
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, Operand tensor, Gemm role,   \
                                        ConstMatrix x) const override;                          \
  void gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,            \
            recipes::Accumulation accumulation, MutableMatrix out) const override;              \
  void high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b, HighPrecision precision,    \
                           MutableMatrix out) const override;                                   \
  void end_forward(LinearScalingState& state) const override;                                   \
  void end_backward(LinearScalingState& state) const override

}  // namespace fp8lab::experiments
