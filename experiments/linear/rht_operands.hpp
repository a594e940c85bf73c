// What the 16-point random Hadamard transform of TE's NVFP4 recipe (sim/rht.hpp) does to the
// operands it is applied to, the wgrad GEMM's input and gradient (recipes/lowering.cpp), measured
// on the operands a model actually passes (issue 41; the probe sidecar's wgrad_* columns).
//
// Per 16-element chunk along the rows (the token dimension: the chunks the transform mixes, which
// are also the 16 x 1 NVFP4 blocks of these operands), the crest factor amax / rms of x and of
// RHT(x); and over the whole operand the E2M1 quantize-dequantize error of x without and with
// the transform, both in x's own domain:
//   plain: ||Q(x) - x|| / ||x||,  with RHT: ||Q(RHT(x)) M^T - x|| / ||x||,
// Q the recipe's NVFP4 plan for that operand rounded to nearest (its stochastic rounding is not
// used here), RHT(x) = x M chunk by chunk as sim computes it (bf16 in and out, as TE), and the
// inverse M^T applied exactly in float64 (M = diag(sign) H16 / 4 is orthogonal): the error the
// wgrad GEMM sees, since it multiplies the two transformed operands along the chunked dimension.
//
// For a Gaussian chunk the crest factor is about 2.1 and the transform changes neither it nor the
// error on average; a chunk below that (a constant offset along the tokens, two-valued data) gets
// a larger crest factor and a smaller error from the transform; a chunk above it (one large
// element, heavy tails, many zeros) a smaller crest factor and, with E4M3 block scales, a larger
// error (docs/literature.md, the RHT rows). No LibTorch.
#pragma once

#include <cstdint>
#include <mutex>

#include "experiments/linear/backend.hpp"
#include "sim/scaling/plan.hpp"

namespace fp8lab::experiments {

struct RhtOperandSums {
  std::uint64_t chunks = 0;  // 16-element chunks with a finite, nonzero rms (crest factors)
  double crest = 0.0;        // sum over those chunks of amax / rms of x
  double crest_rht = 0.0;    // the same of RHT(x)
  double signal = 0.0;       // sum of x^2
  double noise = 0.0;        // sum of (Q(x) - x)^2
  double noise_rht = 0.0;    // sum of (Q(RHT(x)) M^T - x)^2
  void merge(const RhtOperandSums& other);
  // NaN when nothing was measured.
  double mean_crest() const;
  double mean_crest_rht() const;
  double rel_error() const;      // sqrt(noise / signal)
  double rel_error_rht() const;  // sqrt(noise_rht / signal)
};

// x (host memory, [rows, cols] row-major) quantized under `plan`, a kNvfp4 plan (its rht and
// stochastic_rounding are ignored: plain and transformed, both rounded to nearest). Measures
// nothing (all zero) when rows is not a multiple of 16 or x holds a NaN or an infinity. Throws
// std::invalid_argument for a plan of another kind.
RhtOperandSums measure_rht_operand(const sim::scaling::QuantizePlan& plan, ConstMatrix x);

// One Linear's measurement of its wgrad operands (LinearExecution::rht_probe), summed over the
// calls made while active (the forward's input, the backward's gradient); thread-safe (backward
// may run on autograd's worker thread).
class RhtOperandProbe {
 public:
  // The recipe's plans of the wgrad GEMM's input and gradient operands (kNvfp4).
  RhtOperandProbe(sim::scaling::QuantizePlan input, sim::scaling::QuantizePlan grad_output);
  void set_active(bool on);
  // Measures x as the wgrad GEMM's `tensor` operand (kInput or kGradOutput) when active.
  void observe(Operand tensor, ConstMatrix x);
  // The sums of `tensor` (kInput or kGradOutput) since the last take, and resets them.
  RhtOperandSums take(Operand tensor);

 private:
  sim::scaling::QuantizePlan input_, grad_output_;
  mutable std::mutex mutex_;
  bool active_ = false;
  RhtOperandSums input_sums_, grad_output_sums_;
};

}  // namespace fp8lab::experiments
