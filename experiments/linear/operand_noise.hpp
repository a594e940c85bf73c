// The per-step null's perturbation (experiments/run/null_run.hpp, arm `per_step`): in a
// high-precision Linear, every GEMM operand of every training step gets unbiased noise as large as
// the FP8 quantization error a sizing recipe would give that very tensor at that step. Per element
// i, with x̂ the sizing recipe's quantize-dequantize of x (what_if.hpp plans, executed by sim):
//
//   x'_i = x_i + s_i |x̂_i - x_i|,   s_i = +1 or -1, each with probability 1/2
//
// Why this one: FP8 perturbs every step, so a null that perturbs once understates the chaos an
// FP8 run starts (issue 31 §6). This noise has the recipe's own error magnitude element by element
// (so its energy, SQNR, and where it falls: large values get large errors) but is unbiased, E[x'] =
// x, and carries none of rounding's structure: a recipe whose paired error is no larger than this
// null's moved training no more than any perturbation of its size would. Elements whose x or x̂ is
// not finite are left as they are.
//
// The signs come from splitmix64 of (seed, layer, call, element): the same seed gives the same
// bits whatever the thread count, and each Linear counts its own calls (forward, then backward, in
// a fixed order per step), so the run is reproducible. No LibTorch.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/what_if.hpp"

namespace fp8lab::experiments {

// How large the added noise was, summed over a run: per (tensor, GEMM) pair the operand's energy
// Σ x² and the noise's Σ n² (the sizing recipe's quantization error energy, by construction).
struct NoiseEnergy {
  double signal = 0, noise = 0;
  std::uint64_t elements = 0;
  // 10 log10(signal / noise): the SQNR the noise gave the operands (NaN without elements).
  double sqnr_db() const;
};

class OperandNoise {
 public:
  // `sizing`: one lowered what-if recipe (lower_what_if); `seed`: the run's; `layer`: the Linear's
  // index in the model, so that layers draw different signs.
  OperandNoise(WhatIfRecipe sizing, std::uint64_t seed, std::uint64_t layer);

  // x (row-major [rows, cols], host memory) perturbed in place as the `tensor` operand of `gemm`.
  // A pair the sizing recipe keeps in high precision is left as it is.
  void perturb(Operand tensor, Gemm gemm, std::span<float> x, std::int64_t rows, std::int64_t cols);

  const std::string& sizing_name() const { return sizing_.name; }
  // [tensor][gemm], over every call so far.
  const std::array<std::array<NoiseEnergy, 3>, 3>& energy() const { return energy_; }

 private:
  WhatIfRecipe sizing_;
  std::uint64_t seed_;
  std::uint64_t layer_;
  std::uint64_t calls_ = 0;
  std::array<std::array<NoiseEnergy, 3>, 3> energy_{};
};

// The sign of element `index` of call `call` (true: +1): bit 63 of splitmix64 of the four inputs,
// mixed in turn. Declared for the tests, which recount the signs of a perturbation.
bool noise_sign(std::uint64_t seed, std::uint64_t layer, std::uint64_t call, std::uint64_t index);

}  // namespace fp8lab::experiments
