// The Highway lanes of the block-scaled MMA model (block_scaled_lanes.cpp), which
// block_scaled_gemm_into (block_scaled.cpp) runs on checked operands.
#pragma once

#include <cstdint>
#include <span>

#include "sim/gemm/block_scaled.hpp"

namespace fp8lab::sim::gemm_detail {

// How many mxf8f6f4 steps of the lanes' micro-tiles (kLaneRows rows x one vector of columns)
// took the exact way and how many the general one (Mxf8f6f4Panel in block_scaled_lanes.cpp);
// the two give the same bits.
struct BlockScaledLaneSteps {
  std::int64_t exact = 0, general = 0;
  std::int64_t narrow = 0;  // of the exact ones, those whose products add in fp32
};

// Writes D into out (M * N) for operands that resolve_block_scaled_path accepted on `path`, with
// c empty (+0) or M * N values. Outputs whose steps have a NaN or infinite term (an element, a
// scale or c) or whose chain overflows to Inf are left: left[i * N + j] is set to 1 (left comes
// in all 0) and out is unspecified there. Returns whether any output was left. steps (mxf8f6f4;
// may be null) has the call's step counts added to it.
bool block_scaled_lanes(const BlockScaledOperand& a, const BlockScaledOperand& b,
                        BlockScaledPath path, std::span<const float> c, int threads,
                        std::span<float> out, std::span<std::uint8_t> left,
                        BlockScaledLaneSteps* steps = nullptr);

// Whether the mxf4nvf4 lanes fold a and b's values with their scales (their scale exponents'
// sums in [-110, 115], each at most 120: block_scaled_lanes.cpp), which changes their speed,
// not their bits.
bool block_scaled_folds(const BlockScaledOperand& a, const BlockScaledOperand& b);

}  // namespace fp8lab::sim::gemm_detail
