// The mechanics shared by every recipe with more than one scale per tensor (rowwise/columnwise,
// block 1x128 / 128x1 / 128x128, MX 1x32 / 32x1 / 32x32): split a row-major [rows, cols] tensor
// into block_rows x block_cols blocks (partial edge blocks hold only their valid elements), ask the
// recipe's rule for each block's scale from the block's amax, then quantize the block with
// sim::quantize (satfinite, docs/numerics.md §2: every recipe casts with cvt.rn.satfinite).
//
// Contract per block b (the GPU twins in gpu/scaling/ follow it):
//   amax_b    = max |x| over the block's elements, NaN ignored (fmaxf), +Inf if any is ±Inf
//   has_nan_b = whether any element of the block is NaN
//   {s, s_inv, e8m0} = rule(amax_b, has_nan_b)
//   q_i       = cast_satfinite(RN(x_i * s)) for each element i of the block
// and the returned stats are those of sim::quantize(x_block, s) merged over all blocks (amax of x,
// saturated / underflowed / NaN counts of the elements).
// The rule alone decides what NaN does to the scale (TE ignores it, torchao propagates it).
//
// Sub-byte element formats (E2M1, E2M3, E3M2: MXFP4/MXFP6, NVFP4) take the same walk and the same
// q_i = cast(RN(x_i * s)), the cast being cast_fp32_to_subbyte with the caller's SubbyteSpecials
// (whose NaN and -0 codes the peer's converter gives), in Highway lanes with the scalar cast's bits
// (subbyte_lanes.hpp).
// Codes stay one per byte in QuantizedTensor::data (pack_e2m1 packs E2M1 for storage). Their
// statistics: saturated = |RN(x * s)| rounds above max (|y| >= max + half an ulp, or ±Inf);
// underflowed as for FP8; nan = y is NaN (no sub-byte code is NaN: the code is the specials').
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "sim/cast.hpp"
#include "sim/format.hpp"
#include "sim/scaling/common.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

struct BlockScale {
  float scale = 1.0f;      // multiplier before the cast
  float scale_inv = 1.0f;  // dequantization factor stored in QuantizedTensor::scale_inv
  std::uint8_t e8m0 = 0;   // MX only: the E8M0 code behind scale_inv
};

using BlockScaleRule = std::function<BlockScale(float amax, bool has_nan)>;

// Where a row rule writes the scales of one band's blocks (one element per block, in order):
// what BlockScale holds, as spans; e8m0 is empty unless the call stores E8M0 codes.
struct BlockScaleRow {
  std::span<float> scale;
  std::span<float> scale_inv;
  std::span<std::uint8_t> e8m0;
};
// The rule applied to a whole band of blocks at once (amax[j], has_nan[j] -> the row's j-th
// scale): one call per band instead of one per block, so a rule can be vectorized (MX,
// sim/scaling/mx_codes.hpp). It must give, block for block, what a BlockScaleRule would.
using BlockScaleRowRule = std::function<void(
    std::span<const float> amax, std::span<const std::uint8_t> has_nan, BlockScaleRow out)>;

// Quantizes x [rows, cols] block by block. `store_e8m0` fills QuantizedTensor::scale_e8m0.
// Blocks are clipped to the tensor (a block shape larger than the tensor gives one block).
// `subbyte` is read only when `format` is E2M1, E2M3 or E3M2.
// Throws std::invalid_argument for a bad shape or format (naming `function`).
QuantizeResult quantize_blocked(const char* function, std::span<const float> x, std::int64_t rows,
                                std::int64_t cols, BlockShape block, Format format, bool store_e8m0,
                                const BlockScaleRowRule& rule,
                                SubbyteSpecials subbyte = kSubbyteCuda);
// The same with a rule per block (called block by block, in order).
QuantizeResult quantize_blocked(const char* function, std::span<const float> x, std::int64_t rows,
                                std::int64_t cols, BlockShape block, Format format, bool store_e8m0,
                                const BlockScaleRule& rule, SubbyteSpecials subbyte = kSubbyteCuda);

}  // namespace fp8lab::sim::scaling
