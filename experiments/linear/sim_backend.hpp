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

namespace fp8lab::experiments {

struct SimBackendOptions {
  int threads = 1;  // GEMM and quantizer threads (>= 1); the bits do not depend on it
  // Keys the sign draws of Tseng et al.'s RHT (mx_rht): draw k of GEMM g of the Linear with
  // ordinal n is sim::scaling::mx_rht_sign_mask(run_seed, 2^63 + 2 n + g, k) (sim_backend.cpp).
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

// Throws std::invalid_argument naming the backend and the matrix unless size == rows * cols.
void check_matrix(const char* backend, const char* what, std::size_t size, std::int64_t rows,
                  std::int64_t cols);

}  // namespace fp8lab::experiments
