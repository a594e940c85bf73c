// Hopper wgmma FP8 tile kernel with round-toward-zero FMAs (AVX-512), the same model and bits as
// hopper.cpp (gemm.hpp; tensorcore-and-papers.md §0, §1.6), at about one FMA per product and sign
// instead of hopper.cpp's multiply, scale, round and add. One group of up to 32 k, per output:
//
//   1. E = max(e_a + e_b over the nonzero products, e_c if c != 0), in int8 lanes: the packed
//      exponent bytes hold e (kNoExponent for zero), two rows of 32 outputs per 64-byte vector.
//   2. M = 1.5 * 2^(E + 10), a float whose ulp is the grid g = 2^(E - 13) and whose binade
//      [2^(E+10), 2^(E+11)) holds M plus anything this group adds (below). Two accumulators start
//      at acc1 = RZ(M + max(c, 0)) and acc2 = RZ(M + max(-c, 0)): in that binade RZ rounds down
//      onto the grid, so each holds M plus the truncation of |c| toward zero.
//   3. Every product a*b is exact and, in the binade of M, below 2^(E+2) (products of FP8 values
//      have |a*b| < 4 * 2^(e_a+e_b)): fma_rz(|a|, |b|, acc) = acc + floor(|a*b| / g) * g exactly,
//      the product's magnitude truncated onto the grid. Products of the row's sign go to acc1,
//      the others to acc2: B is packed as b+ = max(b, 0) and b- = max(-b, 0), and the row's
//      sign_offset picks (b+, b-) or (b-, b+), so every lane adds one product and one zero.
//      (The packed panels are 64-byte aligned: aligned loads.)
//   4. acc1 - acc2 is exact (Sterbenz: both lie in [2^(E+10), 2^(E+11))) and equals the exact sum
//      of the sign-magnitude truncated terms, Q * g with |Q| < 33 * 2^15; it is +0 when they
//      cancel. Clearing its low 10 mantissa bits truncates it to e8m13, as in hopper.cpp.
// Bounds: each accumulator stays below M + 33 * 2^15 * g < 2^(E+11). E >= -41 whenever a term is
// nonzero (hopper.cpp), so M is a normal float; with no term at all E stays at the int8 start
// value -128 and M = 1.5 * 2^-118, still normal, and acc1 - acc2 = +0.
// Operands with NaN or Inf codes take hopper.cpp's kernel (gemm.cpp), as do targets without
// AVX-512 (embedded rounding). tests/sim/gemm_hopper_test.cpp runs both against the integer
// reference of §1.6 on every SIMD target.
#include <cstdlib>
#include <cstring>

#include "sim/gemm/plan.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/hopper_rz.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::gemm_detail {
namespace HWY_NAMESPACE {

// Every AVX-512 target of Highway (AVX3, AVX3_DL and later ones) has embedded rounding.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

bool HopperRzAvailable() { return true; }

void HopperRzTile(const TileArgs& t, bool split_accumulator) {
  using L = HopperRzLayout;
  constexpr int kRz = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  constexpr int R = static_cast<int>(kTileRows);
  constexpr int V = static_cast<int>(kTileCols / 16);
  constexpr int kPairs = R / 2;
  static_assert(kTileRows % 2 == 0 && kTileCols == 32);
  const __m512 zero = _mm512_setzero_ps();
  const __m512i e8m13_mask = _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u));
  const __m512i sign_mask = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i half_mantissa = _mm512_set1_epi32(0x400000);
  // M's biased exponent is (E + 10) + 127.
  const __m512i exponent_offset = _mm512_set1_epi32(10 + 127);
  for (std::int64_t j = t.first_block; j < t.blocks && t.block_starts[j] < t.k_end; ++j) {
    const std::int64_t block_begin = t.block_starts[j], block_end = t.block_starts[j + 1];
    const std::int64_t k0 = std::max(t.k_begin, block_begin);
    const std::int64_t k1 = std::min(t.k_end, block_end);
    // P_j and c live in the tile state (partial, carry), which is never read while they are +0:
    // c is +0 at the block's first group and after every promotion (c_is_zero), and P_j's first
    // promotion stores c (+0 + c = c: c is never -0) instead of adding it.
    for (std::int64_t g0 = k0; g0 < k1; g0 += kHopperGroupK) {
      const std::int64_t g1 = std::min(g0 + kHopperGroupK, k1);
      const bool c_is_zero = g0 == block_begin ||
                             (split_accumulator && (g0 - block_begin) % kHopperPromotionK == 0);
      // 1. Maximum exponent sum of the products, in int8: byte 2n of pair p is row 2p, byte 2n+1
      //    row 2p + 1, column n.
      __m512i e_pair[kPairs];
      for (int p = 0; p < kPairs; ++p) e_pair[p] = _mm512_set1_epi8(-128);
      for (std::int64_t k = g0; k < g1; ++k) {
        const __m512i eb = _mm512_loadu_si512(t.b_exponents + k * L::kBExponentBytes);
        const std::int8_t* ea = t.a_exponents + k * L::kAExponentBytes;
#pragma GCC unroll 4
        for (int p = 0; p < kPairs; ++p) {
          std::int32_t rows;
          std::memcpy(&rows, ea + 4 * p, sizeof rows);
          e_pair[p] = _mm512_max_epi8(e_pair[p], _mm512_add_epi8(_mm512_set1_epi32(rows), eb));
        }
      }
      // 2. E with c, M, and the two accumulators.
      __m512 acc1[R][V], acc2[R][V];
#pragma GCC unroll 4
      for (int p = 0; p < kPairs; ++p) {
        const __m512i rows[2] = {_mm512_srai_epi16(_mm512_slli_epi16(e_pair[p], 8), 8),
                                 _mm512_srai_epi16(e_pair[p], 8)};
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          const int r = 2 * p + h;
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) {
            const __m256i words = v == 0 ? _mm512_castsi512_si256(rows[h])
                                         : _mm512_extracti64x4_epi64(rows[h], 1);
            __m512i e = _mm512_cvtepi16_epi32(words);
            if (c_is_zero) {  // E from the products only; acc = RZ(M + 0) = M
              const __m512 m = _mm512_castsi512_ps(_mm512_or_si512(
                  _mm512_slli_epi32(_mm512_add_epi32(e, exponent_offset), 23), half_mantissa));
              acc1[r][v] = acc2[r][v] = m;
              continue;
            }
            const __m512 c = _mm512_loadu_ps(t.carry + r * kTileCols + v * 16);
            const __m512i c_bits = _mm512_castps_si512(c);
            const __m512i e_c = _mm512_sub_epi32(
                _mm512_srli_epi32(_mm512_slli_epi32(c_bits, 1), 24), _mm512_set1_epi32(127));
            e = _mm512_mask_max_epi32(e, _mm512_cmp_ps_mask(c, zero, _CMP_NEQ_OQ), e, e_c);
            const __m512 m = _mm512_castsi512_ps(_mm512_or_si512(
                _mm512_slli_epi32(_mm512_add_epi32(e, exponent_offset), 23), half_mantissa));
            const __m512 minus_c = _mm512_castsi512_ps(_mm512_xor_si512(c_bits, sign_mask));
            acc1[r][v] = _mm512_add_round_ps(m, _mm512_max_ps(c, zero), kRz);
            acc2[r][v] = _mm512_add_round_ps(m, _mm512_max_ps(minus_c, zero), kRz);
          }
        }
      }
      // 3. Truncated product magnitudes: same-sign products into acc1, the others into acc2.
      for (std::int64_t k = g0; k < g1; ++k) {
        const char* bk = reinterpret_cast<const char*>(t.b + k * L::kBValues);
        const float* a = t.a + k * kTileRows;
        const std::int32_t* offsets = t.a_sign_offsets + k * kTileRows;
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m512 ar = _mm512_set1_ps(a[r]);
          const float* same = reinterpret_cast<const float*>(bk + offsets[r]);
          const float* opposite =
              reinterpret_cast<const float*>(bk + (L::kOppositeOffset - offsets[r]));
          acc1[r][0] = _mm512_fmadd_round_ps(ar, _mm512_load_ps(same), acc1[r][0], kRz);
          acc1[r][1] = _mm512_fmadd_round_ps(ar, _mm512_load_ps(same + 16), acc1[r][1], kRz);
          acc2[r][0] = _mm512_fmadd_round_ps(ar, _mm512_load_ps(opposite), acc2[r][0], kRz);
          acc2[r][1] = _mm512_fmadd_round_ps(ar, _mm512_load_ps(opposite + 16), acc2[r][1], kRz);
        }
      }
      // 4. The group's e8m13 result; promotion into P_j.
      const bool promote =
          (split_accumulator && (g1 - block_begin) % kHopperPromotionK == 0) || g1 == block_end;
      const bool first_promotion = !split_accumulator || g1 - block_begin <= kHopperPromotionK;
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) {
          const std::int64_t at = r * kTileCols + v * 16;
          const __m512 sum = _mm512_sub_ps(acc1[r][v], acc2[r][v]);
          const __m512 c = _mm512_castsi512_ps(
              _mm512_and_si512(_mm512_castps_si512(sum), e8m13_mask));
          if (promote) {
            const __m512 sum_before = first_promotion ? zero : _mm512_loadu_ps(t.partial + at);
            _mm512_storeu_ps(t.partial + at, first_promotion ? c : _mm512_add_ps(sum_before, c));
          } else {
            _mm512_storeu_ps(t.carry + at, c);
          }
        }
      }
    }
    if (k1 < block_end) continue;  // the block continues in the next chunk
    // Block epilogue, as hopper.cpp: t_j = RN(P_j * RN(sa * sb)); total = t_0, then
    // RN(total + t_j).
    const float* sa = t.a_scales + j * kTileRows;
    const float* sb = t.b_scales + j * kTileCols;
    for (int r = 0; r < R; ++r) {
      const __m512 sar = _mm512_set1_ps(sa[r]);
      for (int v = 0; v < V; ++v) {
        float* out = t.total + r * kTileCols + v * 16;
        const __m512 scaled = _mm512_mul_ps(_mm512_loadu_ps(t.partial + r * kTileCols + v * 16),
                                            _mm512_mul_ps(sar, _mm512_loadu_ps(sb + v * 16)));
        _mm512_storeu_ps(out, j == 0 ? scaled : _mm512_add_ps(_mm512_loadu_ps(out), scaled));
      }
    }
  }
}

#else

bool HopperRzAvailable() { return false; }
// Never called: gemm.cpp asks hopper_rz_available() first, on the same dispatch.
void HopperRzTile(const TileArgs&, bool) { std::abort(); }

#endif

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::gemm_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim::gemm_detail {
HWY_EXPORT(HopperRzAvailable);
HWY_EXPORT(HopperRzTile);

bool hopper_rz_available() { return HWY_DYNAMIC_DISPATCH(HopperRzAvailable)(); }
void hopper_rz_tile(const TileArgs& args, bool split_accumulator) {
  HWY_DYNAMIC_DISPATCH(HopperRzTile)(args, split_accumulator);
}
}  // namespace fp8lab::sim::gemm_detail
#endif
