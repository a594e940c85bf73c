// Internal to sim/gemm/: runs tile_kernel(args, tile) for every tile of C, in parallel over work
// units, and copies the valid part of each 6x32 tile into total (row-major [M, N]).
//
// Work unit = up to kAPanelsPerUnit A panels times kBPanelsPerUnit B panels, B panel outer, so
// that the unit's A panels stay in L2 while each B panel streams through them once.
#pragma once

#include <algorithm>
#include <cstring>

#include "sim/gemm/parallel.hpp"
#include "sim/gemm/plan.hpp"

namespace fp8lab::sim::gemm_detail {

inline constexpr std::int64_t kAPanelsPerUnit = 8;
inline constexpr std::int64_t kBPanelsPerUnit = 4;

template <typename TileKernel>
void for_each_tile(const GemmPlan& plan, int threads, float* total, TileKernel tile_kernel) {
  const std::int64_t a_units = (plan.a.panels + kAPanelsPerUnit - 1) / kAPanelsPerUnit;
  const std::int64_t b_units = (plan.b.panels + kBPanelsPerUnit - 1) / kBPanelsPerUnit;
  const std::int64_t m = plan.shape.m, n = plan.shape.n;
  if (a_units == 0 || b_units == 0) return;
  parallel_units(a_units * b_units, threads, [&](std::int64_t unit) {
    const std::int64_t au = unit % a_units, bu = unit / a_units;
    alignas(64) float tile[kTileRows * kTileCols];
    const std::int64_t b_end = std::min(plan.b.panels, (bu + 1) * kBPanelsPerUnit);
    const std::int64_t a_end = std::min(plan.a.panels, (au + 1) * kAPanelsPerUnit);
    for (std::int64_t bp = bu * kBPanelsPerUnit; bp < b_end; ++bp) {
      for (std::int64_t ap = au * kAPanelsPerUnit; ap < a_end; ++ap) {
        tile_kernel(plan.tile(ap, bp), tile);
        const std::int64_t row0 = ap * kTileRows, col0 = bp * kTileCols;
        const std::int64_t rows = std::min(kTileRows, m - row0);
        const std::int64_t cols = std::min(kTileCols, n - col0);
        for (std::int64_t r = 0; r < rows; ++r) {
          std::memcpy(total + (row0 + r) * n + col0, tile + r * kTileCols,
                      static_cast<std::size_t>(cols) * sizeof(float));
        }
      }
    }
  });
}

}  // namespace fp8lab::sim::gemm_detail
