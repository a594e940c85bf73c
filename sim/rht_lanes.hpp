// The Highway lanes of the 16-point RHT (rht_lanes.cpp) and the scalar chunks they leave
// (rht.cpp), for random_hadamard_transform_bf16 on checked arguments.
#pragma once

#include <cstdint>

#include "sim/rht.hpp"

namespace fp8lab::sim::rht_detail {

// y = RHT(x) of rht.hpp for a [rows, cols] tensor whose chunked dimension is a multiple of 16.
// Returns how many chunks went to the scalar model (the tests check that the lanes ran).
std::int64_t rht_lanes(const float* x, std::int64_t rows, std::int64_t cols, RhtAxis axis,
                       std::uint16_t sign_mask, float* out);

// The scalar model on the chunks that start at c0 along the chunked dimension, for the outer
// indices [o_begin, o_end) (columns for kRows, rows for kCols).
void rht_chunks_scalar(const float* x, std::int64_t rows, std::int64_t cols, RhtAxis axis,
                       std::uint16_t sign_mask, std::int64_t c0, std::int64_t o_begin,
                       std::int64_t o_end, float* out);

}  // namespace fp8lab::sim::rht_detail
