// The Highway lanes of mx_dither.hpp's 64-point RHT and 'dither_scale' quantizer
// (mx_dither_lanes.cpp), and the scalar pieces they leave to mx_dither.cpp (edge chunks and
// blocks), for mx_rht_bf16 and quantize_mx_dither_scale on checked arguments.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "sim/scaling/common.hpp"
#include "sim/scaling/mx_dither.hpp"

namespace fp8lab::sim::scaling::mx_dither_detail {

// The signs of scipy's hadamard(64) as fp32 sign bits: entry i * 64 + j is 0x80000000 where
// H[i][j] = (-1)^popcount(i & j) is -1, else 0.
inline constexpr std::array<std::uint32_t, kMxRhtSize* kMxRhtSize> kHadamardSignBits = [] {
  std::array<std::uint32_t, kMxRhtSize * kMxRhtSize> bits{};
  for (int i = 0; i < kMxRhtSize; ++i) {
    for (int j = 0; j < kMxRhtSize; ++j) {
      const bool negative = (std::popcount(static_cast<unsigned>(i & j)) & 1) != 0;
      bits[static_cast<std::size_t>(i * kMxRhtSize + j)] = negative ? 0x8000'0000u : 0u;
    }
  }
  return bits;
}();

// y = x S of mx_rht_bf16 for a [rows, cols] tensor whose chunked dimension is a multiple of 64.
void mx_rht_lanes(const float* x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                  std::uint64_t sign_mask, float* out);

// The scalar model on the 64 elements of line `line` (a row for kRowwise, a column for
// kColumnwise) that start at t0 along the chunked dimension.
void mx_rht_chunk_scalar(const float* x, std::int64_t cols, ScaleAxis axis, std::uint64_t sign_mask,
                         std::int64_t line, std::int64_t t0, float* out);

// Where the quantizer writes: codes, the three scale arrays of a QuantizedTensor, sized.
struct DitherOutput {
  std::uint8_t* codes;
  std::uint8_t* scale_e8m0;
  float* scale_inv;
  float* scale;
  std::int64_t scale_cols;  // blocks per row of the scale arrays
  float amax = 0.0f;        // of the whole tensor, NaN-ignoring
  std::uint64_t underflowed = 0;
};

// quantize_mx_dither_scale's codes, scales and statistics for the whole tensor (blocks of 32
// along the columns for kRowwise, along the rows for kColumnwise).
void mx_dither_lanes(const float* x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                     std::uint64_t seed, std::uint64_t stream, DitherOutput& out);

// The scalar model on the block [r0, r1) x [c0, c1) whose scales sit at index b.
void mx_dither_block_scalar(const float* x, std::int64_t cols, std::int64_t r0, std::int64_t r1,
                            std::int64_t c0, std::int64_t c1, std::size_t b, std::uint64_t seed,
                            std::uint64_t stream, DitherOutput& out);

// The block's shared exponent se from its amax (finite), and its three scale fields at index b.
int mx_dither_shared_exponent(float amax);
void mx_dither_set_scales(int shared_exponent, std::size_t b, DitherOutput& out);
// A block holding a NaN or Inf: scale code 255, NaN scales (its codes stay 0).
void mx_dither_set_special(std::size_t b, DitherOutput& out);

}  // namespace fp8lab::sim::scaling::mx_dither_detail
