// The `sim` LinearBackend: the CPU reference (sim/scaling/ quantizers, sim/gemm/ models). Every
// recipe kind of recipes::Scaling maps to its sim/scaling/ function:
//
//   scaling             quantize (per operand and GEMM; blocks along the GEMM's K, gemm_axes.hpp)
//   delayed             DelayedScalingLinear (per layer: scales + amax histories, TE §2)
//   current             quantize_current_te (per tensor, TE §5.2)
//   tensorwise          quantize_tensorwise_torchao (per tensor, torchao)
//   rowwise             quantize_axiswise_torchao (one scale per row/column along K)
//   rowwise_with_gw_hp  as torchao's table (torchao_operand_cast): weight for dgrad tensorwise,
//                       wgrad in high precision (Fp8Linear never asks for it)
//   block               quantize_block_operand: weight 128x128, input and grad_output 1x128 /
//                       128x1 along K
//   mxfp8               quantize_mx_operand: 1x32 / 32x1 along K, recipe.mx_scale_mode and
//                       recipe.torchao_version
//
// Formats: input and weight get the forward format of recipe.fp8_format, grad_output the backward
// one (HYBRID: E4M3 / E5M2); recipe.power_2_scales applies to current, torchao and block scaling.
// GEMMs: sim::gemm_into with the recipe's accumulation model, sim::high_precision_gemm_into for
// the high-precision ones; both split outputs over `threads` without changing bits.
#pragma once

#include "experiments/fp8/backend.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/gemm_axes.hpp"

namespace fp8lab::experiments {

struct SimBackendOptions {
  int threads = 1;  // GEMM threads (>= 1); the bits do not depend on it
};

class SimBackend final : public LinearBackend {
 public:
  explicit SimBackend(SimBackendOptions options = {});

  std::string_view name() const override { return "sim"; }
  std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& recipe) const override;
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, LinearTensor tensor,
                                        GemmRole role, ConstMatrix x) const override;
  void gemm(GemmRole role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
            recipes::Accumulation accumulation, MutableMatrix out) const override;
  void high_precision_gemm(GemmRole role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
                           MutableMatrix out) const override;
  void end_forward(LinearScalingState& state) const override;
  void end_backward(LinearScalingState& state) const override;

  // The delayed-scaling state inside a state this backend made (scales, amax histories), or
  // nullptr when its recipe is not delayed scaling. Throws std::invalid_argument for a state made
  // by another backend.
  static const sim::scaling::DelayedScalingLinear* delayed_state(const LinearScalingState& state);

 private:
  SimBackendOptions options_;
};

// recipes -> sim::scaling translations (also for tests and the cuda backend).
sim::scaling::DelayedScalingConfig delayed_config(const recipes::Recipe& recipe);
sim::Format element_format(const recipes::Recipe& recipe, LinearTensor tensor);
// The sim/scaling names of a GEMM role and of a Linear's tensor. The cuda backend uses these too,
// so both backends choose the same scale axes and operand copies.
sim::scaling::Gemm scaling_gemm(GemmRole role);
sim::scaling::Operand scaling_operand(LinearTensor tensor);
// Throws std::invalid_argument naming the backend and the matrix unless size == rows * cols.
void check_matrix(const char* backend, const char* what, std::size_t size, std::int64_t rows,
                  std::int64_t cols);

}  // namespace fp8lab::experiments
