// The `sim` LinearBackend: the CPU reference. It executes the plans of the recipe's lowering
// (recipes/lowering.hpp, one per Linear tensor and GEMM): sim::scaling::quantize(plan, x) for the
// stateless kinds, DelayedScalingLinear (per layer: scales + amax histories, TE §2) for kDelayed;
// a kHighPrecision operand is refused (Fp8Linear never asks for it).
// GEMMs: sim::gemm_into with the recipe's accumulation model, sim::high_precision_gemm_into for
// the high-precision ones, K as sim/settings.hpp's table says; both split outputs over `threads`
// without changing bits, and so do the quantizers of tensors of at least 2^18 elements
// (sim/scaling/execute.hpp: bands of block rows, per-tensor chunks; delayed scaling's cast in
// chunks, its amax history as on one thread; smaller ones on the calling thread, where a hand-off
// costs more than it splits). The backward pass's dgrad and wgrad run as one parallel region
// (run_independent).
#pragma once

#include <atomic>
#include <cstdint>

#include "experiments/linear/backend.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/nvfp4.hpp"  // StochasticStream

namespace fp8lab::experiments {

struct SimBackendOptions {
  int threads = 1;  // GEMM and quantizer threads (>= 1); the bits do not depend on it
  // Keys every random draw of the run: the sign draws of Tseng et al.'s RHT (mx_rht): draw k of
  // GEMM g of the Linear with ordinal n is sim::scaling::mx_rht_sign_mask(run_seed, 2^63 + 2 n +
  // g, k) (sim_backend.cpp); and stochastic rounding's Philox stream (stochastic_stream below).
  std::uint64_t run_seed = 0;
};

class SimBackend final : public LinearBackend {
 public:
  explicit SimBackend(SimBackendOptions options = {});

  std::string_view name() const override { return "sim"; }
  FP8LAB_LINEAR_BACKEND_HOST_PATH;
  // With threads >= calls.size() >= 2: the calls at once, one thread each (sim's worker pool),
  // each on a one-thread SimBackend; otherwise in order with every thread.
  void run_independent(std::span<const Call> calls) const override;
  // True when both roles' plans are the same per-tensor scaling (current, torchao tensorwise,
  // static, delayed) with neither stochastic rounding nor an RHT: one scale for the whole tensor,
  // so the codes do not depend on the GEMM's K; delayed records the same amax twice (a maximum).
  bool quantizes_alike(const LinearScalingState& state, Operand tensor, Gemm first,
                       Gemm second) const override;
  // Copies the delayed-scaling state (scales, amax histories); the stochastic-rounding stream
  // stays `to`'s own.
  void copy_state(const LinearScalingState& from, LinearScalingState& to) const override;

  // The delayed-scaling state inside a state this backend made (scales, amax histories), or
  // nullptr when its recipe is not delayed scaling. Throws std::invalid_argument for a state made
  // by another backend.
  static const sim::scaling::DelayedScalingLinear* delayed_state(const LinearScalingState& state);

 private:
  SimBackendOptions options_;
  mutable std::atomic<std::uint64_t> states_made_{0};  // the next state's ordinal
};

// The Philox key of the k-th stochastically rounded quantization (nvfp4_stochastic_rounding,
// mx_stochastic_rounding's dither) of operand `tensor` for GEMM `role` of the Linear with ordinal n
// (the states a SimBackend made, in the model's conversion order):
//   seed   = run_seed
//   stream = n * 2^36 + (3 * role + tensor) * 2^32 + k    (role: fprop 0, dgrad 1, wgrad 2;
//                                                          tensor: input 0, weight 1, grad_output 2)
// and element i draws philox_random_word(seed, stream, i). A pure function of (run seed, Linear,
// GEMM, operand, k): a run draws the same bits every time, two seeds draw different streams for
// the same tensor, and no two tensors of a run share a stream; bit 63 is clear, so no stream is
// one of the RHT's (2^63 + 2 n + g). In a training run k is the step (one forward and backward per
// Linear per step). std::length_error unless n < 2^27 and k < 2^32.
sim::scaling::StochasticStream stochastic_stream(std::uint64_t run_seed, std::uint64_t ordinal,
                                                 Operand tensor, Gemm role, std::uint64_t call);

// Throws std::invalid_argument naming the backend and the matrix unless size == rows * cols.
void check_matrix(const char* backend, const char* what, std::size_t size, std::int64_t rows,
                  std::int64_t cols);

}  // namespace fp8lab::experiments
