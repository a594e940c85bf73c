// fp32_seq tile kernels (gemm.hpp): per output, acc = RN(acc + a_k * b_k) over each K-block in
// increasing k, then the block epilogue t_j = RN(P_j * RN(sa * sb)), total = RN(total + t_j).
//
// A 6-row x 2-vector micro-kernel: k outer, one broadcast per A row and one load per B vector,
// each output lane owning one sum. Vectorizing across outputs instead of along k keeps every
// output's addition order, so the kernel equals the naive triple loop to the bit.
//
// Two variants: fp32_seq_tile uses FMA (MulAdd), equal to multiply-then-add because products of
// FP8 values are exact in fp32 (docs/numerics.md §3); fp32_mul_add_tile rounds each product first, as
// the high-precision GEMM must for fp32/bf16 operands whose products need not be exact.
#include "sim/gemm/plan.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/fp32_seq.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/gemm/tile_frame.hpp"

FP8LAB_GEMM_TILES_BEGIN;

template <bool kFused>
HWY_INLINE void SequentialTile(const TileArgs& t) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  constexpr std::int64_t R = kTileRows;
  for (std::int64_t c0 = 0; c0 < kTileCols; c0 += 2 * lanes) {
    for (std::int64_t j = t.first_block; t.has_block(j); ++j) {
      const auto [block_begin, block_end, k0, k1] = t.part(j);
      // P_j starts at +0 at the block's first k, else continues from the previous chunk.
      V acc[R][2];
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t v = 0; v < 2; ++v) {
          acc[r][v] = k0 == block_begin ? hn::Zero(d)
                                        : hn::LoadU(d, t.partial + r * kTileCols + c0 + v * lanes);
        }
      }
      const float* HWY_RESTRICT a = t.a + k0 * R;
      const float* HWY_RESTRICT b = t.b + k0 * kTileCols + c0;
      for (std::int64_t k = k0; k < k1; ++k, a += R, b += kTileCols) {
        const V b0 = hn::LoadU(d, b);
        const V b1 = hn::LoadU(d, b + lanes);
        for (std::int64_t r = 0; r < R; ++r) {
          const V ar = hn::Set(d, a[r]);
          if constexpr (kFused) {
            acc[r][0] = hn::MulAdd(ar, b0, acc[r][0]);
            acc[r][1] = hn::MulAdd(ar, b1, acc[r][1]);
          } else {
            acc[r][0] = hn::Add(acc[r][0], hn::Mul(ar, b0));
            acc[r][1] = hn::Add(acc[r][1], hn::Mul(ar, b1));
          }
        }
      }
      if (k1 < block_end) {  // the block continues in the next chunk
        for (std::int64_t r = 0; r < R; ++r) {
          for (std::int64_t v = 0; v < 2; ++v) {
            hn::StoreU(acc[r][v], d, t.partial + r * kTileCols + c0 + v * lanes);
          }
        }
        continue;
      }
      // Block epilogue: t_j = RN(P_j * RN(sa * sb)); total = t_0, then RN(total + t_j).
      const float* sa = t.a_scales + j * R;
      const float* sb = t.b_scales + j * kTileCols + c0;
      for (std::int64_t r = 0; r < R; ++r) {
        const V sar = hn::Set(d, sa[r]);
        for (std::int64_t v = 0; v < 2; ++v) {
          float* out = t.total + r * kTileCols + c0 + v * lanes;
          const V scaled = hn::Mul(acc[r][v], hn::Mul(sar, hn::LoadU(d, sb + v * lanes)));
          hn::StoreU(j == 0 ? scaled : hn::Add(hn::LoadU(d, out), scaled), d, out);
        }
      }
    }
  }
}

void Fp32SeqTile(const TileArgs& t) { SequentialTile<true>(t); }
void Fp32MulAddTile(const TileArgs& t) { SequentialTile<false>(t); }

FP8LAB_GEMM_TILES_END;

#if HWY_ONCE
namespace fp8lab::sim::gemm_detail {
HWY_EXPORT(Fp32SeqTile);
HWY_EXPORT(Fp32MulAddTile);

void fp32_seq_tile(const TileArgs& args) { HWY_DYNAMIC_DISPATCH(Fp32SeqTile)(args); }
void fp32_mul_add_tile(const TileArgs& args) { HWY_DYNAMIC_DISPATCH(Fp32MulAddTile)(args); }
}  // namespace fp8lab::sim::gemm_detail
#endif
