// Hopper wgmma FP8 tile kernel (gemm.hpp, tensorcore-and-papers.md §0 and §1.6), vectorized across
// output columns. One group of up to 32 k, for each output lane:
//
//   1. mx = max(2^(e_a + e_b) over the nonzero products, 2^e_c if c != 0). The operands' packed
//      exponent_powers hold 2^e (raw exponent; 0 for 0/NaN/Inf), so 2^(e_a+e_b) is one exact
//      product of powers of two.
//   2. scale = 2^13 / mx (exact). Every term x (a product a*b, exact in fp32, or c) becomes
//      trunc(x * scale): x * scale is exact (a power-of-two scaling, |x * scale| < 4 * 2^13) and
//      Trunc rounds toward zero, i.e. the term is truncated onto the grid 2^(E-13).
//   3. The truncated terms are integers of magnitude < 2^15; 33 of them sum below 2^21 < 2^24, so
//      their fp32 sum is exact in any order: it is the model's exact integer sum Q.
//   4. V = Q * 2^(E-13) (exact); clearing the low 10 of fp32's 23 mantissa bits truncates V toward
//      zero to 13 fraction bits (e8m13). V + 0 turns -0 into +0; NaN becomes 0x7FFFFFFF.
// Range: products of FP8 values have raw exponents >= -28 (E5M2 subnormals, 2^-14 each), so a
// group with a nonzero product has E >= -28 and a grid >= 2^-41, and every c produced here is 0
// or at least 2^-41: c is never an fp32 subnormal, scale never overflows.
// Specials: NaN/Inf operands have power 0 and keep their value: x * scale and Trunc keep Inf/NaN,
// the sum gives NaN or an Inf as the float64 sum would; with mx = 0 the scale is 1 so Inf survives.
//
// tests/sim/gemm_hopper_test.cpp checks this kernel against a direct integer implementation of
// §1.6 (sign-magnitude shifts of the integer significands) and hand-built cases.
#include "sim/gemm/plan.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/hopper.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/gemm/tile_frame.hpp"

FP8LAB_GEMM_TILES_BEGIN;

// Rows per micro-tile: the second pass keeps scale and sum for rows x 2 vectors in registers
// (AVX-512 has 32 vector registers, AVX2 16).
#if HWY_TARGET <= HWY_AVX3
inline constexpr std::int64_t kHopperRows = 6;
#else
inline constexpr std::int64_t kHopperRows = 3;
#endif
static_assert(kTileRows % kHopperRows == 0);

// For k in [g0, g1): op(r, a_r, b_0, b_1) for the R rows from r0 and the two vectors of columns
// from c0, with a_r row r's entry of the [k][kTileRows] A panel `a` broadcast, and b_0, b_1 the
// vectors of the [k][kTileCols] B panel `b` (the values, or their powers of two).
template <std::int64_t R, class D, class Op>
HWY_INLINE void ForEachK(D d, const float* a, const float* b, std::int64_t g0, std::int64_t g1,
                         std::int64_t r0, std::int64_t c0, Op op) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::int64_t k = g0; k < g1; ++k) {
    const float* bk = b + k * kTileCols + c0;
    const auto b0 = hn::LoadU(d, bk), b1 = hn::LoadU(d, bk + lanes);
    const float* ak = a + k * kTileRows + r0;
    for (std::int64_t r = 0; r < R; ++r) op(r, hn::Set(d, ak[r]), b0, b1);
  }
}

template <std::int64_t R>
HWY_INLINE void HopperRows(const TileArgs& t, bool split_accumulator, std::int64_t r0,
                           std::int64_t c0) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  using V = hn::Vec<decltype(d)>;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  const V two_pow_frac = hn::Set(d, static_cast<float>(1 << kHopperFractionBits));
  const auto e8m13_mask = hn::Set(du, ~((1u << (23 - kHopperFractionBits)) - 1u));
  const auto exponent_mask = hn::Set(du, 0x7F800000u);
  const V canonical_nan = hn::BitCast(d, hn::Set(du, 0x7FFFFFFFu));

  for (std::int64_t j = t.first_block; t.has_block(j); ++j) {
    const auto [block_begin, block_end, k0, k1] = t.part(j);
    // P_j and c start at +0 at the block's first k, else continue from the previous chunk (chunks
    // start at multiples of kKChunk from the block start: on group and promotion boundaries).
    V partial[R][2], c[R][2];
    for (std::int64_t r = 0; r < R; ++r) {
      for (std::int64_t v = 0; v < 2; ++v) {
        const std::int64_t at = (r0 + r) * kTileCols + c0 + v * lanes;
        partial[r][v] = k0 == block_begin ? zero : hn::LoadU(d, t.partial + at);
        c[r][v] = k0 == block_begin ? zero : hn::LoadU(d, t.carry + at);
      }
    }
    for (std::int64_t g0 = k0; g0 < k1; g0 += kHopperGroupK) {
      const std::int64_t g1 = std::min(g0 + kHopperGroupK, k1);
      // 1. Alignment maximum, starting from c's 2^e_c (0 when c = 0 or not finite).
      V scale[R][2];
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t v = 0; v < 2; ++v) {
          const V power = hn::BitCast(d, hn::And(hn::BitCast(du, c[r][v]), exponent_mask));
          scale[r][v] = hn::IfThenElseZero(hn::IsFinite(c[r][v]), power);
        }
      }
      ForEachK<R>(d, t.a_powers, t.b_powers, g0, g1, r0, c0,
                  [&](std::int64_t r, V pa, V pb0, V pb1) HWY_ATTR {
                    scale[r][0] = hn::Max(scale[r][0], hn::Mul(pa, pb0));
                    scale[r][1] = hn::Max(scale[r][1], hn::Mul(pa, pb1));
                  });
      // 2. scale = 2^13 / 2^E (1 when every term is zero or special); c's truncated term.
      V sum[R][2];
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t v = 0; v < 2; ++v) {
          const auto none = hn::Eq(scale[r][v], zero);
          scale[r][v] = hn::IfThenElse(none, one, hn::Div(two_pow_frac, scale[r][v]));
          sum[r][v] = hn::Trunc(hn::Mul(c[r][v], scale[r][v]));
        }
      }
      // 3. Exact sum of the truncated product terms.
      ForEachK<R>(d, t.a, t.b, g0, g1, r0, c0, [&](std::int64_t r, V a, V b0, V b1) HWY_ATTR {
        sum[r][0] = hn::Add(sum[r][0], hn::Trunc(hn::Mul(hn::Mul(a, b0), scale[r][0])));
        sum[r][1] = hn::Add(sum[r][1], hn::Trunc(hn::Mul(hn::Mul(a, b1), scale[r][1])));
      });
      // 4. Back to 2^(E-13) units, truncate to e8m13, -0 -> +0, canonical NaN; promotion.
      const bool promote = hopper_promotes(split_accumulator, g1, block_begin, block_end);
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t v = 0; v < 2; ++v) {
          const V value = hn::Mul(sum[r][v], hn::Div(one, scale[r][v]));
          const V e8m13 = hn::BitCast(d, hn::And(hn::BitCast(du, value), e8m13_mask));
          const V result = hn::Add(e8m13, zero);
          c[r][v] = hn::IfThenElse(hn::IsNaN(result), canonical_nan, result);
          if (promote) {
            partial[r][v] = hn::Add(partial[r][v], c[r][v]);
            c[r][v] = zero;
          }
        }
      }
    }
    if (k1 < block_end) {  // the block continues in the next chunk
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t v = 0; v < 2; ++v) {
          const std::int64_t at = (r0 + r) * kTileCols + c0 + v * lanes;
          hn::StoreU(partial[r][v], d, t.partial + at);
          hn::StoreU(c[r][v], d, t.carry + at);
        }
      }
      continue;
    }
    // Block epilogue, as fp32_seq: t_j = RN(P_j * RN(sa * sb)); total = t_0, then RN(total + t_j).
    const float* sa = t.a_scales + j * kTileRows + r0;
    const float* sb = t.b_scales + j * kTileCols + c0;
    for (std::int64_t r = 0; r < R; ++r) {
      const V sar = hn::Set(d, sa[r]);
      for (std::int64_t v = 0; v < 2; ++v) {
        float* out = t.total + (r0 + r) * kTileCols + c0 + v * lanes;
        const V scaled = hn::Mul(partial[r][v], hn::Mul(sar, hn::LoadU(d, sb + v * lanes)));
        hn::StoreU(j == 0 ? scaled : hn::Add(hn::LoadU(d, out), scaled), d, out);
      }
    }
  }
}

void HopperTile(const TileArgs& t, bool split_accumulator) {
  const hn::ScalableTag<float> d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::int64_t c0 = 0; c0 < kTileCols; c0 += 2 * lanes) {
    for (std::int64_t r0 = 0; r0 < kTileRows; r0 += kHopperRows) {
      HopperRows<kHopperRows>(t, split_accumulator, r0, c0);
    }
  }
}

FP8LAB_GEMM_TILES_END;

#if HWY_ONCE
namespace fp8lab::sim::gemm_detail {
HWY_EXPORT(HopperTile);

void hopper_tile(const TileArgs& args, bool split_accumulator) {
  HWY_DYNAMIC_DISPATCH(HopperTile)(args, split_accumulator);
}
}  // namespace fp8lab::sim::gemm_detail
#endif
