// The walk behind stats.hpp's quantization sums (sqnr_sums, moment_sums,
// max_block_dynamic_range_log2 and quantization_sums) in Highway lanes (stats_lanes.cpp): each
// element's float64 terms computed in lanes, each sum's additions in element order, so that the
// sums are bit for bit those of adding the elements one by one (sim_scaling_stats_test holds them
// against a naive element-order reference on every target).
#pragma once

#include <cstdint>

#include "sim/scaling/stats.hpp"

namespace fp8lab::sim::scaling::stats_detail {

// Which measures a walk takes (a bit set).
enum Measures : unsigned { kSqnr = 1u, kMoments = 2u, kRange = 4u };

// A row-major [rows, cols] input x and, for kSqnr and kRange, its quantization's layout: codes
// (rows x cols), scale_inv (scale_rows x scale_cols, one per block of block_rows x block_cols) and
// the format's 256-entry decode table. The caller has checked the shapes.
struct WalkInput {
  const float* x = nullptr;
  std::int64_t rows = 0, cols = 0;
  const std::uint8_t* codes = nullptr;  // kSqnr
  const float* scale_inv = nullptr;     // kSqnr
  const float* decode = nullptr;        // kSqnr: 256 entries
  std::int64_t block_rows = 1, block_cols = 1, scale_cols = 1;
};

// The sums `measures` asks for (the others are left at their defaults). measures is one of kSqnr,
// kMoments, kRange or all three.
QuantizationSums walk_lanes(unsigned measures, const WalkInput& in);

// The Highway target walk_lanes dispatches to (tests name it in failures).
const char* stats_target_name();

}  // namespace fp8lab::sim::scaling::stats_detail
