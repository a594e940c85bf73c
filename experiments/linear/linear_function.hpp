// The one autograd path of every backend-driven Linear (Fp8Linear and HighPrecisionLinear): a
// custom torch::autograd::Function whose forward runs fprop and whose backward runs dgrad and wgrad
// through a LinearBackend, each GEMM either on quantized operands (FP8) or on the unquantized
// operands with the deterministic high-precision GEMM. Sharing this path is what makes an
// Fp8Linear with all three GEMMs in high precision give the baseline's bits.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <memory>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/backend.hpp"
#include "experiments/linear/linear_stats.hpp"
#include "experiments/linear/non_finite.hpp"
#include "experiments/linear/operand_noise.hpp"
#include "experiments/linear/rht_operands.hpp"
#include "experiments/linear/what_if.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

// How one call of a Linear runs.
struct LinearExecution {
  std::shared_ptr<const LinearBackend> backend;
  HighPrecision high_precision = HighPrecision::fp32;
  // FP8 only (state == nullptr: every GEMM in high precision, nothing quantized or recorded).
  std::shared_ptr<LinearScalingState> state;
  std::array<bool, 3> quantized{};  // per Gemm: run on quantized operands
  // Per Gemm (dgrad, wgrad; recipes::runs_dequantized, backward_override dequantized): run in
  // high precision on the fprop GEMM's quantized weight (dgrad) or input (wgrad), dequantized
  // (sim::scaling::dequantize: decode x scale_inv, fp32), as TE's linear.py does. Needs the
  // fprop GEMM quantized (quantized[fprop]); codes kept on the device are dequantized there
  // (LinearBackend::dequantize_resident).
  std::array<bool, 3> dequantized{};
  recipes::GemmAccumulation accumulation{recipes::Accumulation::kFp32Seq,
                                         recipes::Accumulation::kFp32Seq,
                                         recipes::Accumulation::kFp32Seq};
  std::shared_ptr<Fp8AutocastRecord> record;  // the region this call registered with
  bool first_in_region = false;               // its backward runs the backward scale update
  std::shared_ptr<LinearStats> stats;         // merged into by forward and backward; may be null
  // Whether quantizations measure their operands into `stats` (amax, scales, counts, SQNR); off
  // on steps whose statistics nobody reads (tensors on CUDA then copy nothing back for them).
  // GEMM counts and timers are kept either way.
  bool measure_operands = true;
  // Other recipes' quantization of the same tensors, measured into stats->what_if alongside
  // (what_if.hpp); only when measure_operands, in FP8 and high-precision Linears alike.
  std::shared_ptr<const WhatIfRecipes> what_if;
  // The run's first-non-finite watch for this Linear (non_finite.hpp); null: not watched.
  std::shared_ptr<LayerWatch> watch;
  // The per-step null's noise (operand_noise.hpp): added to every operand of the high-precision
  // GEMMs of training steps (not eval passes, which run without autograd); null: none.
  std::shared_ptr<OperandNoise> noise;
  // The probes' measurement of the wgrad GEMM's operands under the RHT (rht_operands.hpp): given
  // the forward's input and the backward's gradient whenever wgrad follows; null: none.
  std::shared_ptr<RhtOperandProbe> rht_probe;
};

// y = x · weightᵀ + bias for x [rows, in_features] fp32, weight [out_features, in_features] fp32
// and bias [out_features] fp32 or undefined. The bias is added after the GEMM in fp32 (RN), and its
// gradient is the fp32 sum of grad_output over rows in increasing row order. Throws
// std::invalid_argument naming the argument when a dtype or shape is wrong.
at::Tensor run_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                      LinearExecution execution);

}  // namespace fp8lab::experiments
