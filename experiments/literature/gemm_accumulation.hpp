// L1 (docs/literature.md): DeepSeek-V3 §3.3, "Increasing Accumulation Precision": the H800's FP8
// GEMM accumulation keeps about 14 bits; "GEMM operations of two random matrices with K = 4096"
// show "a maximum relative error of nearly 2%"; promoting partial sums to FP32 every N_C = 128
// elements (4 WGMMAs) fixes it. The report names neither the inputs nor the metric, so this
// measures several of each. No LibTorch.
//
// Setting: both operands E4M3 with one current (TE) scale per tensor, so that the whole K is one
// scale block and the three accumulation models of sim/gemm differ only in how they sum:
//   fp32_seq      one fp32 add per product (the reference order)
//   hopper_fast   e8m13 wgmma groups of 32, never promoted (TE/cuBLASLt fast accumulation)
//   hopper_split  the same, promoted to fp32 every 128 elements (DeepSeek's N_C = 128)
// Metrics, each against two references:
//   max rel   max over outputs not near zero (|ref| >= 0.1 x the RMS of ref) of |C - ref| / |ref|
//   rel frob  ||C - ref||_F / ||ref||_F
//   references: `exact` = the exact sum of the same FP8 products (sim::gemm_exact): the error of
//   the accumulation alone; `fp64` = the float64 product of the unquantized inputs: quantization
//   and accumulation together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/literature/test_tensors.hpp"

namespace fp8lab::experiments::literature {

inline constexpr double kNearZeroFraction = 0.1;  // of the reference's RMS

struct AccumulationRow {
  Distribution distribution;
  std::int64_t k = 0;
  std::string model;  // fp32_seq | hopper_fast | hopper_split
  double max_rel_vs_exact = 0, frob_vs_exact = 0;
  double max_rel_vs_fp64 = 0, frob_vs_fp64 = 0;
};

struct AccumulationOptions {
  std::vector<std::int64_t> ks = {512, 1024, 2048, 4096, 8192, 16384};
  std::int64_t rows = 64;  // M = N
  std::uint64_t seed = 0;
  int threads = 1;
};

// One row per (distribution, K, model), in that nesting order.
std::vector<AccumulationRow> measure_accumulation(const AccumulationOptions& options);

// The metrics of C against a reference (exposed for the tests).
struct ErrorMetrics {
  double max_rel = 0;
  double frob = 0;
};
ErrorMetrics error_metrics(const std::vector<float>& c, const std::vector<double>& reference);

// The table as text: one line per row, fixed columns.
std::string format_accumulation_table(const std::vector<AccumulationRow>& rows);

}  // namespace fp8lab::experiments::literature
