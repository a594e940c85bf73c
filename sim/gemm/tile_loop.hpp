// Internal to sim/gemm/: runs a tile kernel over every tile of C and every K chunk, in parallel
// over work units, and writes the valid part of each 6x32 tile total into C (row-major [M, N])
// through the output epilogue (finish_values: bias, canonical NaN, bf16), so that C is written
// once.
//
// Work unit = up to kAPanelsPerUnit A panels times kBPanelsPerUnit B panels. Inside a unit: K
// chunks outer (in increasing k: each output's order is kept), then B panels, then A panels, so
// the B panel's chunk stays in L1 while the unit's A panels stream from L2.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "sim/gemm/plan.hpp"
#include "sim/parallel.hpp"

namespace fp8lab::sim::gemm_detail {

inline constexpr std::int64_t kAPanelsPerUnit = 8;
inline constexpr std::int64_t kBPanelsPerUnit = 4;

template <typename TileKernel>
void for_each_tile(const GemmPlan& plan, int threads, float* out, std::span<const float> bias,
                   GemmOutputType output, TileKernel tile_kernel) {
  const std::int64_t a_units = (plan.a.panels + kAPanelsPerUnit - 1) / kAPanelsPerUnit;
  const std::int64_t b_units = (plan.b.panels + kBPanelsPerUnit - 1) / kBPanelsPerUnit;
  const std::int64_t m = plan.shape.m, n = plan.shape.n;
  if (a_units == 0 || b_units == 0) return;
  constexpr std::int64_t kTile = kTileRows * kTileCols;
  parallel_units(a_units * b_units, threads, [&](std::int64_t unit) {
    const std::int64_t au = unit % a_units, bu = unit / a_units;
    const std::int64_t a0 = au * kAPanelsPerUnit,
                       a1 = std::min(plan.a.panels, a0 + kAPanelsPerUnit);
    const std::int64_t b0 = bu * kBPanelsPerUnit,
                       b1 = std::min(plan.b.panels, b0 + kBPanelsPerUnit);
    const std::int64_t tiles = (a1 - a0) * (b1 - b0);
    // partial, carry and total of each tile of the unit: a buffer per thread, reused by every
    // unit and GEMM (a fresh zeroed one per unit cost as much as a small GEMM's tiles). The
    // kernels never read a value they have not written in this GEMM: partial and carry are
    // loaded only inside a block after its first group, total only after block 0.
    thread_local AlignedVector<float> state;
    if (state.size() < static_cast<std::size_t>(3 * tiles * kTile)) {
      state.resize(static_cast<std::size_t>(3 * tiles * kTile));
    }
    for (const KChunk& chunk : plan.chunks) {
      for (std::int64_t bp = b0; bp < b1; ++bp) {
        for (std::int64_t ap = a0; ap < a1; ++ap) {
          float* s = state.data() + 3 * ((bp - b0) * (a1 - a0) + (ap - a0)) * kTile;
          TileArgs args = plan.tile(ap, bp);
          args.k_begin = chunk.k_begin;
          args.k_end = chunk.k_end;
          args.first_block = chunk.first_block;
          args.partial = s;
          args.carry = s + kTile;
          args.total = s + 2 * kTile;
          tile_kernel(args);
        }
      }
    }
    for (std::int64_t bp = b0; bp < b1; ++bp) {
      for (std::int64_t ap = a0; ap < a1; ++ap) {
        const float* total = state.data() + (3 * ((bp - b0) * (a1 - a0) + (ap - a0)) + 2) * kTile;
        const std::int64_t row0 = ap * kTileRows, col0 = bp * kTileCols;
        const std::int64_t rows = std::min(kTileRows, m - row0);
        const std::int64_t cols = std::min(kTileCols, n - col0);
        const float* bias_cols = bias.empty() ? nullptr : bias.data() + col0;
        for (std::int64_t r = 0; r < rows; ++r) {
          finish_values(total + r * kTileCols, bias_cols, output, cols,
                        out + (row0 + r) * n + col0);
        }
      }
    }
  });
}

}  // namespace fp8lab::sim::gemm_detail
