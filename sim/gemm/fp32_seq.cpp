// fp32_seq tile kernels (gemm.hpp): per output, acc = RN(acc + a_k * b_k) over each K-block in
// increasing k, then the block epilogue t_j = RN(P_j * RN(sa * sb)), total = RN(total + t_j).
//
// A 6-row x 2-vector micro-kernel: k outer, one broadcast per A row and one load per B vector,
// each output lane owning one sum. Vectorizing across outputs instead of along k keeps every
// output's addition order, so the kernel equals the naive triple loop to the bit.
//
// Two variants: fp32_seq_tile uses FMA (MulAdd), equal to multiply-then-add because products of
// FP8 values are exact in fp32 (NUMERICS.md §3); fp32_mul_add_tile rounds each product first, as
// the high-precision GEMM must for fp32/bf16 operands whose products need not be exact.
#include "sim/gemm/plan.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/fp32_seq.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::gemm_detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kFused>
HWY_INLINE void SequentialTile(const TileArgs& t, float* HWY_RESTRICT tile) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  constexpr std::int64_t R = kTileRows;
  for (std::int64_t c0 = 0; c0 < kTileCols; c0 += 2 * lanes) {
    for (std::int64_t j = 0; j < t.blocks; ++j) {
      V acc[R][2];
      for (std::int64_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = hn::Zero(d);
      const std::int64_t k0 = t.block_starts[j], k1 = t.block_starts[j + 1];
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
      // Block epilogue: t_j = RN(P_j * RN(sa * sb)); total = t_0, then RN(total + t_j).
      const float* sa = t.a_scales + j * R;
      const float* sb = t.b_scales + j * kTileCols + c0;
      const V sb0 = hn::LoadU(d, sb), sb1 = hn::LoadU(d, sb + lanes);
      for (std::int64_t r = 0; r < R; ++r) {
        const V sar = hn::Set(d, sa[r]);
        float* out = tile + r * kTileCols + c0;
        const V t0 = hn::Mul(acc[r][0], hn::Mul(sar, sb0));
        const V t1 = hn::Mul(acc[r][1], hn::Mul(sar, sb1));
        hn::StoreU(j == 0 ? t0 : hn::Add(hn::LoadU(d, out), t0), d, out);
        hn::StoreU(j == 0 ? t1 : hn::Add(hn::LoadU(d, out + lanes), t1), d, out + lanes);
      }
    }
  }
}

void Fp32SeqTile(const TileArgs& t, float* HWY_RESTRICT tile) { SequentialTile<true>(t, tile); }
void Fp32MulAddTile(const TileArgs& t, float* HWY_RESTRICT tile) {
  SequentialTile<false>(t, tile);
}

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::gemm_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim::gemm_detail {
HWY_EXPORT(Fp32SeqTile);
HWY_EXPORT(Fp32MulAddTile);

void fp32_seq_tile(const TileArgs& args, float* tile) {
  HWY_DYNAMIC_DISPATCH(Fp32SeqTile)(args, tile);
}
void fp32_mul_add_tile(const TileArgs& args, float* tile) {
  HWY_DYNAMIC_DISPATCH(Fp32MulAddTile)(args, tile);
}
}  // namespace fp8lab::sim::gemm_detail
#endif
