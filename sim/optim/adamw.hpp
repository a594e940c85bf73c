// One AdamW step with stored moments of a chosen precision (state_quantization.hpp) and master
// weights in fp32 or bf16: the reference the LibTorch optimizer (experiments/run/
// quantized_adamw.hpp) runs, element by element in fp32 as FP8-LM's kernel (MS-AMP adamw.cu,
// adamw_fp8_stage1/2) writes it:
//   w  = w * fp32(1 - lr wd)                     (decoupled weight decay, first)
//   m  = b1 m' + (1 - b1) g,  v = b2 v' + (1 - b2) (g g)   with m', v' the stored moments decoded
//   w -= fp32(lr / bc1) (m / (sqrt(v) / sqrt(bc2) + eps)),  bc_i = fp32(1 - b_i^t)
// then m and v are stored (encode_state) and w is rounded to the master precision: fp32 keeps it,
// bf16 rounds to nearest even, bf16_sr rounds stochastically (16 Philox bits added below bf16's
// last mantissa bit, then truncated; sim/rng.hpp, element i of (seed, stream)). The update uses
// the step's moments before they are stored, as both FP8-LM's and COAT's kernels do.
// b^t is taken by repeated squaring in double (the kernels' pow, to within double rounding).
#pragma once

#include <cstdint>
#include <span>

#include "sim/optim/state_quantization.hpp"

namespace fp8lab::sim::optim {

enum class MasterWeights : std::uint8_t { kFp32, kBf16, kBf16Stochastic };

struct OptimizerPrecision {
  StateQuantization m, v;
  MasterWeights master = MasterWeights::kFp32;
  friend bool operator==(const OptimizerPrecision&, const OptimizerPrecision&) = default;
};

struct AdamWHyper {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  std::int64_t step = 1;  // 1 for the first step
};

struct MomentStates {
  StoredState m, v;
  friend bool operator==(const MomentStates&, const MomentStates&) = default;
};
MomentStates initial_moments(std::size_t n, const OptimizerPrecision& precision);

// Sums of squares, in double, over one tensor's step: the moments as computed and their storing
// error (decoded stored value - computed), the update as computed (w before the step - w in fp32
// after it) and the master rounding's error (stored w - fp32 w).
struct StepErrors {
  double m_signal = 0, m_noise = 0, v_signal = 0, v_noise = 0;
  double update_signal = 0, update_noise = 0;
  // Per moment: the elements, the computed moment's max |x| (NaN ignored), and the elements
  // whose computed moment is non-zero and stored as 0 (underflowed) or stored as NaN.
  std::int64_t count = 0;
  double m_amax = 0, v_amax = 0;
  std::int64_t m_underflowed = 0, v_underflowed = 0, m_nan = 0, v_nan = 0;
  StepErrors& operator+=(const StepErrors& o);
};

// bf16 of x rounded stochastically with `random_bits`' low 16 bits (NaN and +-Inf as fp32_to_bf16).
std::uint16_t fp32_to_bf16_stochastic(float x, std::uint32_t random_bits);

// One step of one tensor: weights and state updated in place. weights.size() == grads.size() ==
// the states' element count. seed and stream pick bf16_sr's random bits.
StepErrors adamw_step(const AdamWHyper& hyper, const OptimizerPrecision& precision,
                      std::span<float> weights, std::span<const float> grads, MomentStates& state,
                      std::uint64_t seed, std::uint64_t stream);

}  // namespace fp8lab::sim::optim
