// Hopper wgmma FP8 tile kernel with round-toward-zero FMAs (AVX-512), the same model and bits as
// hopper.cpp (gemm.hpp; tensorcore-and-papers.md §0, §1.6), at one FMA per product plus three
// byte operations per 64 products, instead of hopper.cpp's multiply, scale, round and add. One
// group of up to 32 k, per output:
//
//   1. E = max(e_a + e_b over the nonzero products, e_c if c != 0), in int8 lanes: the packed
//      exponent bytes hold e (kNoExponent for zero), two rows of 32 outputs per 64-byte vector.
//   2. M = 1.5 * 2^(E + 10), a float whose ulp is the grid g = 2^(E - 13) and whose binade
//      [2^(E+10), 2^(E+11)) holds M plus anything this group adds (bounds below). One
//      accumulator starts at acc = M + trunc(c), c truncated toward zero onto the grid:
//      RZ(M + c) for c >= 0 (RZ rounds down in this binade), RU(M + c) for c < 0 (rounding up
//      there is M - floor(|c| / g) * g).
//   3. Every product p = a*b is exact and, in the binade of M, |p| < 2^(E+2) (products of FP8
//      values have |a*b| < 4 * 2^(e_a+e_b)): fma_rz(a, b, acc) = acc + floor(p / g) * g exactly,
//      for either sign of p. The model wants trunc(p / g), the magnitude truncated (sign-
//      magnitude); that is floor(p / g) + 1 when p < 0 and p is not a multiple of g, floor
//      otherwise. So beside the FMAs an int8 count per output adds up those products: p = s *
//      2^(l_a + l_b) with s odd (l: exponent of the lowest set bit), so p is off the grid iff
//      l_a + l_b < E - 13. The packed low-bit bytes (plan.hpp HopperRzLayout) carry l and the
//      sign so that their byte sum is below the threshold clamp(E - 13, -33, 31) + 64 (unsigned)
//      exactly for the negative products off the grid: one add, one compare and one masked
//      increment per 64 products (two rows of 32 outputs); a group counts at most 32 per output.
//      (The masked FMA alternative, RZ on the lanes of positive products and RU on the others,
//      keeps two FMA-port operations per 16 products and needs a mask per row and vector.)
//   4. acc + count * g is acc's bit pattern plus count (one binade: consecutive floats are g
//      apart). Its difference to M (the binade's exponent with mantissa 0x400000, rebuilt from
//      acc) is exact (Sterbenz) and equals the exact sum of the sign-magnitude truncated terms,
//      Q * g with |Q| < 33 * 2^15; it is +0 when they cancel. Clearing its low 10 mantissa bits
//      truncates it to e8m13, as in hopper.cpp.
// Bounds: |c| < 2^(E+1), so acc stays within M -+ (|c| + 32 * (2^(E+2) + g)) + 32 * g < M -+
// 2^(E+8), well inside [2^(E+10), 2^(E+11)), whatever the order of the terms. E >= -41 whenever a term is nonzero (hopper.cpp), so M is a normal float; with no
// term at all E stays at the int8 start value -128, M = 1.5 * 2^-118 is still normal, nothing is
// counted (the threshold clamps at -33 + 64) and the result is +0.
// B is loaded once per k for all rows (one accumulator per output, no sign split), so the
// product loop issues 12 FMAs, 9 byte operations and 12 loads per k for the 6 x 32 tile.
// Operands with NaN or Inf codes take hopper.cpp's kernel (gemm.cpp), as do targets without
// AVX-512 (embedded rounding). tests/sim/gemm_hopper_test.cpp runs both against the integer
// reference of §1.6 on every SIMD target.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "sim/gemm/plan.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/hopper_rz.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/gemm/tile_frame.hpp"

FP8LAB_GEMM_TILES_BEGIN;

// Every AVX-512 target of Highway (AVX3, AVX3_DL and later ones) has embedded rounding.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

bool HopperRzAvailable() { return true; }

// The four bytes of row pair p at one k of an A byte panel (rows 2p and 2p + 1, each twice:
// HopperRzLayout), in every 32-bit lane: beside a B vector's byte pairs (column n in bytes 2n and
// 2n + 1), byte 2n of the result is row 2p and byte 2n + 1 row 2p + 1.
HWY_INLINE __m512i broadcast_row_pair(const void* k_bytes, int p) {
  std::int32_t rows;
  std::memcpy(&rows, static_cast<const char*>(k_bytes) + 4 * p, sizeof rows);
  return _mm512_set1_epi32(rows);
}

// The 16 int16 values of row h of a row pair in the columns of vector v (rows[h] holds the row's
// 32).
HWY_INLINE __m256i pair_row_words(const __m512i (&rows)[2], int h, int v) {
  return v == 0 ? _mm512_castsi512_si256(rows[h]) : _mm512_extracti64x4_epi64(rows[h], 1);
}

// The per-output arrays (acc, count, threshold, e_pair) are indexed only in plain loops, never
// captured by a lambda: GCC 12 keeps an array that a lambda captures by reference in memory, and
// with a lambda over (row, vector) here it stored all 12 accumulators on every k (the GEMM took
// 1.4-1.5x as long; docs/performance.md, issue 46 second round).
void HopperRzTile(const TileArgs& t, bool split_accumulator) {
  using L = HopperRzLayout;
  constexpr int kRz = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  constexpr int kRu = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
  constexpr int R = static_cast<int>(kTileRows);
  constexpr int V = static_cast<int>(kTileCols / 16);
  constexpr int kPairs = R / 2;
  static_assert(kTileRows % 2 == 0 && kTileCols == 32);
  const __m512 zero = _mm512_setzero_ps();
  const __m512i e8m13_mask = _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u));
  const __m512i exponent_field = _mm512_set1_epi32(static_cast<int>(0xFF800000u));
  const __m512i half_mantissa = _mm512_set1_epi32(0x400000);
  const __m512i low_byte = _mm512_set1_epi16(0xFF);
  const __m512i minus_one = _mm512_set1_epi8(-1);
  // M's bits: biased exponent (E + 10) + 127, mantissa 0x400000, i.e. (E << 23) + m_bits_at_0.
  const __m512i m_bits_at_0 = _mm512_set1_epi32(((10 + 127) << 23) | 0x400000);
  // The count threshold clamp(E - 13, -33, 31) + 64 = clamp(E, -20, 44) + 51, in int8 lanes.
  const __m512i threshold_low = _mm512_set1_epi8(-20), threshold_high = _mm512_set1_epi8(44);
  const __m512i threshold_offset = _mm512_set1_epi8(51);
  const __m512i bias_bytes = _mm512_set1_epi8(127);
  for (std::int64_t j = t.first_block; t.has_block(j); ++j) {
    const auto [block_begin, block_end, k0, k1] = t.part(j);
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
        const __m512i eb = _mm512_load_si512(t.b_exponents + k * L::kBExponentBytes);
        const std::int8_t* ea = t.a_exponents + k * L::kAExponentBytes;
#pragma GCC unroll 4
        for (int p = 0; p < kPairs; ++p) {
          e_pair[p] = _mm512_max_epi8(e_pair[p], _mm512_add_epi8(broadcast_row_pair(ea, p), eb));
        }
      }
      // 2. E with c, the count threshold (both in the pair layout's bytes), M and the
      //    accumulator. c's exponent byte is its biased exponent - 127, so c = +0 gives -127:
      //    below every group's E that has a nonzero product (>= -41), and where there is none
      //    E = -127 instead of -128 changes no bit (M stays normal, nothing is counted, the result
      //    is +0). |c| < 2^(E+1) keeps it in int8.
      __m512 acc[R][V];
      __m512i threshold[kPairs];
#pragma GCC unroll 4
      for (int p = 0; p < kPairs; ++p) {
        __m512i e_bytes = e_pair[p];
        if (!c_is_zero) {
          __m256i words[2][V];  // c's (sign, biased exponent) as int16, row 2p + h, columns 16v..
#pragma GCC unroll 2
          for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
            for (int v = 0; v < V; ++v) {
              const __m512i c_bits = _mm512_loadu_si512(t.carry + (2 * p + h) * kTileCols + v * 16);
              words[h][v] = _mm512_cvtepi32_epi16(_mm512_srli_epi32(c_bits, 23));
            }
          }
          const __m512i even =
              _mm512_inserti64x4(_mm512_castsi256_si512(words[0][0]), words[0][1], 1);
          const __m512i odd =
              _mm512_inserti64x4(_mm512_castsi256_si512(words[1][0]), words[1][1], 1);
          // (even & 0xFF) | (odd << 8): the sign bits (bit 8) dropped.
          const __m512i biased = _mm512_ternarylogic_epi32(even, _mm512_slli_epi16(odd, 8),
                                                           low_byte, 0xEC);  // (a & c) | b
          e_bytes = _mm512_max_epi8(e_bytes, _mm512_sub_epi8(biased, bias_bytes));
        }
        // The count threshold clamp(E - 13, -33, 31) + 64 = clamp(E, -20, 44) + 51, in [31, 95].
        threshold[p] = _mm512_add_epi8(
            _mm512_min_epi8(_mm512_max_epi8(e_bytes, threshold_low), threshold_high),
            threshold_offset);
        const __m512i rows[2] = {_mm512_srai_epi16(_mm512_slli_epi16(e_bytes, 8), 8),
                                 _mm512_srai_epi16(e_bytes, 8)};
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) {
            const int r = 2 * p + h;
            const __m512i e = _mm512_cvtepi16_epi32(pair_row_words(rows, h, v));
            const __m512 m =
                _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(e, 23), m_bits_at_0));
            if (c_is_zero) {
              acc[r][v] = m;  // RZ(M + 0)
            } else {
              const __m512 c = _mm512_loadu_ps(t.carry + r * kTileCols + v * 16);
              const __mmask16 negative = _mm512_movepi32_mask(_mm512_castps_si512(c));
              acc[r][v] =
                  _mm512_mask_add_round_ps(_mm512_add_round_ps(m, c, kRz), negative, m, c, kRu);
            }
          }
        }
      }
      // 3. floor(p / g) of every product into acc; count the negative products off the grid.
      __m512i count[kPairs];
      for (int p = 0; p < kPairs; ++p) count[p] = _mm512_setzero_si512();
      for (std::int64_t k = g0; k < g1; ++k) {
        const float* bk = t.b + k * kTileCols;
        const __m512 b0 = _mm512_load_ps(bk), b1 = _mm512_load_ps(bk + 16);
        const float* a = t.a + k * kTileRows;
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m512 ar = _mm512_set1_ps(a[r]);
          acc[r][0] = _mm512_fmadd_round_ps(ar, b0, acc[r][0], kRz);
          acc[r][1] = _mm512_fmadd_round_ps(ar, b1, acc[r][1], kRz);
        }
        const __m512i lb = _mm512_load_si512(t.b_low_bits + k * L::kBExponentBytes);
        const std::uint8_t* la = t.a_low_bits + k * L::kAExponentBytes;
#pragma GCC unroll 4
        for (int p = 0; p < kPairs; ++p) {
          const __mmask64 off_grid =
              _mm512_cmplt_epu8_mask(_mm512_add_epi8(broadcast_row_pair(la, p), lb), threshold[p]);
          count[p] = _mm512_mask_sub_epi8(count[p], off_grid, count[p], minus_one);
        }
      }
      // 4. The group's e8m13 result; promotion into P_j.
      const bool promote = hopper_promotes(split_accumulator, g1, block_begin, block_end);
      const bool first_promotion = !split_accumulator || g1 - block_begin <= kHopperPromotionK;
#pragma GCC unroll 4
      for (int p = 0; p < kPairs; ++p) {
        const __m512i rows[2] = {_mm512_and_si512(count[p], low_byte),
                                 _mm512_srli_epi16(count[p], 8)};
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) {
            const __m256i half = pair_row_words(rows, h, v);
            const int r = 2 * p + h;
            const __m512i acc_bits = _mm512_castps_si512(acc[r][v]);
            const __m512 m = _mm512_castsi512_ps(
                _mm512_or_si512(_mm512_and_si512(acc_bits, exponent_field), half_mantissa));
            const __m512 truncated =
                _mm512_castsi512_ps(_mm512_add_epi32(acc_bits, _mm512_cvtepu16_epi32(half)));
            const __m512 sum = _mm512_sub_ps(truncated, m);
            const __m512 c =
                _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(sum), e8m13_mask));
            const std::int64_t at = r * kTileCols + v * 16;
            if (promote) {
              const __m512 sum_before = first_promotion ? zero : _mm512_loadu_ps(t.partial + at);
              _mm512_storeu_ps(t.partial + at, first_promotion ? c : _mm512_add_ps(sum_before, c));
            } else {
              _mm512_storeu_ps(t.carry + at, c);
            }
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

// The words table[idx] for 32 indices in [0, 256): four 64-entry lookups (two vectors of 32
// words each), chosen by bits 6 and 7 of the index.
HWY_INLINE __m512i lookup_words(const std::uint16_t* table, __m512i idx, __mmask32 bit6,
                                __mmask32 bit7) {
  const auto* t = reinterpret_cast<const __m512i*>(table);
  const __m512i r0 = _mm512_permutex2var_epi16(_mm512_load_si512(t), idx, _mm512_load_si512(t + 1));
  const __m512i r1 =
      _mm512_permutex2var_epi16(_mm512_load_si512(t + 2), idx, _mm512_load_si512(t + 3));
  const __m512i r2 =
      _mm512_permutex2var_epi16(_mm512_load_si512(t + 4), idx, _mm512_load_si512(t + 5));
  const __m512i r3 =
      _mm512_permutex2var_epi16(_mm512_load_si512(t + 6), idx, _mm512_load_si512(t + 7));
  return _mm512_mask_blend_epi16(bit7, _mm512_mask_blend_epi16(bit6, r0, r1),
                                 _mm512_mask_blend_epi16(bit6, r2, r3));
}

// The 32 fp32 values whose high halves are the words of v: 16 at `out`, 16 at out + 16, the
// first `count` of them (<= 32).
HWY_INLINE void store_values(const __m512i v, float* out, std::int64_t count) {
  const __m512i lo = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), 16);
  const __m512i hi = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), 16);
  auto first = [](std::int64_t n) {
    return n >= 16 ? static_cast<__mmask16>(0xFFFF)
                   : static_cast<__mmask16>((1u << std::max<std::int64_t>(n, 0)) - 1u);
  };
  _mm512_mask_storeu_epi32(out, first(count), lo);
  _mm512_mask_storeu_epi32(out + 16, first(count - 16), hi);
}

void HopperRzPack(const std::uint8_t* codes, std::int64_t code_stride, std::int64_t k,
                  std::int64_t width, const RzWordTables& tables, float* values,
                  std::int8_t* exponents, std::uint8_t* low_bits) {
  using L = HopperRzLayout;
  const __m512i bit6 = _mm512_set1_epi16(0x40), bit7 = _mm512_set1_epi16(0x80);
  if (width == kTileCols) {
    // B: per k, 32 codes -> 32 values and the 64 bytes of each array.
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const __m512i idx = _mm512_cvtepu8_epi16(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + kk * code_stride)));
      const __mmask32 m6 = _mm512_test_epi16_mask(idx, bit6);
      const __mmask32 m7 = _mm512_test_epi16_mask(idx, bit7);
      _mm512_storeu_si512(exponents + kk * L::kBExponentBytes,
                          lookup_words(tables.exponent, idx, m6, m7));
      _mm512_storeu_si512(low_bits + kk * L::kBExponentBytes,
                          lookup_words(tables.low_bit, idx, m6, m7));
      store_values(lookup_words(tables.value_high, idx, m6, m7), values + kk * kTileCols,
                   kTileCols);
    }
    return;
  }
  // A: 16 k (96 codes, rows 2p and 2p + 1 adjacent) per step, in three vectors of 32 codes: each
  // row pair's two exponent words become its four bytes x(2p), x(2p+1), x(2p), x(2p+1) by one
  // in-lane byte shuffle, which is the layout's order; the values are already in theirs.
  static_assert(kTileRows == 6 && L::kAExponentBytes == 12);
  const __m512i pair_bytes = _mm512_set1_epi32(0x0200'0200);
  const __m512i lane_offsets =
      _mm512_set_epi32(12 * 0x0101'0101, 8 * 0x0101'0101, 4 * 0x0101'0101, 0, 12 * 0x0101'0101,
                       8 * 0x0101'0101, 4 * 0x0101'0101, 0, 12 * 0x0101'0101, 8 * 0x0101'0101,
                       4 * 0x0101'0101, 0, 12 * 0x0101'0101, 8 * 0x0101'0101, 4 * 0x0101'0101, 0);
  const __m512i spread = _mm512_add_epi8(pair_bytes, lane_offsets);
  auto first_bytes = [](std::int64_t n) {
    return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << std::max<std::int64_t>(n, 0)) - 1;
  };
  for (std::int64_t k0 = 0; k0 < k; k0 += 16) {
    const std::int64_t k_here = std::min<std::int64_t>(16, k - k0);
    for (std::int64_t q = 0; q < 3; ++q) {
      const std::int64_t first_code = k0 * kTileRows + 32 * q;  // 32 codes, 16 row pairs
      const std::int64_t codes_here = k_here * kTileRows - 32 * q;
      const __m512i idx = _mm512_cvtepu8_epi16(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + first_code)));
      const __mmask32 m6 = _mm512_test_epi16_mask(idx, bit6);
      const __mmask32 m7 = _mm512_test_epi16_mask(idx, bit7);
      const __m512i e = _mm512_shuffle_epi8(lookup_words(tables.exponent, idx, m6, m7), spread);
      const __m512i l = _mm512_shuffle_epi8(lookup_words(tables.low_bit, idx, m6, m7), spread);
      _mm512_mask_storeu_epi8(exponents + 2 * first_code, first_bytes(2 * codes_here), e);
      _mm512_mask_storeu_epi8(low_bits + 2 * first_code, first_bytes(2 * codes_here), l);
      store_values(lookup_words(tables.value_high, idx, m6, m7), values + first_code, codes_here);
    }
  }
}

// The 8 codes data[w * o_stride + kk .. + 7] of row w (0 past `valid`), as one 64-bit lane each
// of rows w0 .. w0 + 7.
HWY_INLINE __m512i row_codes(const std::uint8_t* data, std::int64_t o_stride, std::int64_t valid,
                             std::int64_t w0, std::int64_t kk) {
  std::uint64_t q[8] = {};
  for (std::int64_t j = 0; j < 8; ++j) {
    if (w0 + j < valid) std::memcpy(&q[j], data + (w0 + j) * o_stride + kk, sizeof q[j]);
  }
  return _mm512_set_epi64(static_cast<long long>(q[7]), static_cast<long long>(q[6]),
                          static_cast<long long>(q[5]), static_cast<long long>(q[4]),
                          static_cast<long long>(q[3]), static_cast<long long>(q[2]),
                          static_cast<long long>(q[1]), static_cast<long long>(q[0]));
}

void HopperRzCodes(const std::uint8_t* data, std::int64_t o_stride, std::int64_t valid,
                   std::int64_t k0, std::int64_t k1, std::int64_t width, std::uint8_t* out) {
  // Per 8 k: each 128-bit lane holds rows 2L and 2L + 1 (8 codes each); an in-lane byte shuffle
  // interleaves them (word i = the row pair at k i), a word permutation gathers word i of every
  // lane (qword i = rows 8g .. 8g + 7 at k i); for B, qword permutations then join the four
  // groups of 8 rows into the 32 codes of each k.
  const __m512i interleave = _mm512_set4_epi32(0x0F07'0E06, 0x0D05'0C04, 0x0B03'0A02, 0x0901'0800);
  // word i * 4 + L <- word L * 8 + i
  const __m512i gather_k = _mm512_set_epi16(31, 23, 15, 7, 30, 22, 14, 6, 29, 21, 13, 5, 28, 20, 12,
                                            4, 27, 19, 11, 3, 26, 18, 10, 2, 25, 17, 9, 1, 24, 16,
                                            8, 0);
  // A: word i * 3 + L <- word L * 8 + i (L < 3), for the 24 words of 8 k.
  const __m512i gather_k_a = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 23, 15, 7, 22, 14, 6, 21, 13,
                                              5, 20, 12, 4, 19, 11, 3, 18, 10, 2, 17, 9, 1, 16, 8,
                                              0);
  const __m512i join_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
  const __m512i join_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  const __m512i rows_01 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
  const __m512i rows_23 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  std::int64_t kk = k0;
  for (; kk + 8 <= k1; kk += 8) {
    std::uint8_t* at = out + (kk - k0) * width;
    if (width == kTileCols) {
      __m512i g[4];
      for (int q = 0; q < 4; ++q) {
        g[q] = _mm512_permutexvar_epi16(
            gather_k, _mm512_shuffle_epi8(row_codes(data, o_stride, valid, 8 * q, kk), interleave));
      }
      // t01a: qwords (g0 q_i, g1 q_i) for i = 0..3; t01b for i = 4..7; the same for g2, g3.
      const __m512i t01a = _mm512_permutex2var_epi64(g[0], join_lo, g[1]);
      const __m512i t01b = _mm512_permutex2var_epi64(g[0], join_hi, g[1]);
      const __m512i t23a = _mm512_permutex2var_epi64(g[2], join_lo, g[3]);
      const __m512i t23b = _mm512_permutex2var_epi64(g[2], join_hi, g[3]);
      _mm512_storeu_si512(at, _mm512_permutex2var_epi64(t01a, rows_01, t23a));
      _mm512_storeu_si512(at + 64, _mm512_permutex2var_epi64(t01a, rows_23, t23a));
      _mm512_storeu_si512(at + 128, _mm512_permutex2var_epi64(t01b, rows_01, t23b));
      _mm512_storeu_si512(at + 192, _mm512_permutex2var_epi64(t01b, rows_23, t23b));
    } else {
      const __m512i codes = _mm512_permutexvar_epi16(
          gather_k_a, _mm512_shuffle_epi8(row_codes(data, o_stride, valid, 0, kk), interleave));
      _mm512_mask_storeu_epi8(at, (__mmask64{1} << 48) - 1, codes);  // 8 k x 6 rows
    }
  }
  for (; kk < k1; ++kk) {
    for (std::int64_t w = 0; w < valid; ++w) out[(kk - k0) * width + w] = data[w * o_stride + kk];
  }
}

#else

bool HopperRzAvailable() { return false; }
// Never called: gemm.cpp asks hopper_rz_available() first, on the same dispatch.
void HopperRzTile(const TileArgs&, bool) { std::abort(); }
void HopperRzPack(const std::uint8_t*, std::int64_t, std::int64_t, std::int64_t,
                  const RzWordTables&, float*, std::int8_t*, std::uint8_t*) {
  std::abort();
}
void HopperRzCodes(const std::uint8_t*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                   std::int64_t, std::uint8_t*) {
  std::abort();
}

#endif

FP8LAB_GEMM_TILES_END;

#if HWY_ONCE
namespace fp8lab::sim::gemm_detail {
HWY_EXPORT(HopperRzAvailable);
HWY_EXPORT(HopperRzTile);
HWY_EXPORT(HopperRzPack);
HWY_EXPORT(HopperRzCodes);

bool hopper_rz_available() { return HWY_DYNAMIC_DISPATCH(HopperRzAvailable)(); }
void hopper_rz_tile(const TileArgs& args, bool split_accumulator) {
  HWY_DYNAMIC_DISPATCH(HopperRzTile)(args, split_accumulator);
}
void hopper_rz_pack(const std::uint8_t* codes, std::int64_t code_stride, std::int64_t k,
                    std::int64_t width, const RzWordTables& tables, float* values,
                    std::int8_t* exponents, std::uint8_t* low_bits) {
  // A's step reads 96 consecutive codes across 16 k: its codes must be [k][6] in order.
  if (width == kTileCols ? code_stride < kTileCols : code_stride != width) {
    throw std::logic_error("hopper_rz_pack: code stride " + std::to_string(code_stride) +
                           " for a panel of width " + std::to_string(width) +
                           "; accepted: the width for A, >= 32 for B");
  }
  const auto pack = HWY_DYNAMIC_DISPATCH(HopperRzPack);
  pack(codes, code_stride, k, width, tables, values, exponents, low_bits);
}
void hopper_rz_codes(const std::uint8_t* data, std::int64_t o_stride, std::int64_t valid,
                     std::int64_t k0, std::int64_t k1, std::int64_t width, std::uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(HopperRzCodes)(data, o_stride, valid, k0, k1, width, out);
}
}  // namespace fp8lab::sim::gemm_detail
#endif
