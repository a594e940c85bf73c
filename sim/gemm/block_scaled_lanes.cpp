// The block-scaled MMA model of block_scaled.hpp in Highway lanes, one output column a lane: the
// same steps, with the same bits, as the scalar integer model reference::block_scaled_gemm_into
// (block_scaled.cpp), which takes the outputs these lanes leave (NaN/Inf terms, overflow).
//
// Every intermediate below is exact, which is why fp32 and fp64 lanes give the integer model's
// bits:
//   kMxf4Nvf4: a group's dot product of 2x-values (integers <= 12 in magnitude) is an integer
//     below 16 * 144 in fp32 FMAs; times the two scale significands (each m <= 15) it stays below
//     2^20. Truncating it onto the grid 2^(E_max - 35) multiplies by a power of two and truncates
//     (Trunc): the result has <= 20 significant bits, so it is an exact fp32 integer (< 2^47).
//     c = m_c 2^(e_c - 23) likewise (m_c < 2^24). The five such integers add exactly in fp64
//     (< 2^50 < 2^53). Folded (fold_scales, Mxf4Nvf4Panel<true>): the values carry their scales,
//     a group's dot product is its term's value, and a step with every group within 2^27 of
//     E_max (no term bit below the grid) adds the values and c's truncated value in fp64.
//   kMxf8f6f4: E_max comes from max(e_a + e_b) over the step's nonzero products (int8 lanes, four
//     elements of K a 32-bit lane; a zero element's kZeroElementExponent keeps its products below
//     every real sum, saturating) plus the two scale exponents. A product
//     a * b * 2^(25 + e_sa + e_sb - E_max) is exact in fp32 (8 significant bits; the power of two is clamped where the term is 0
//     anyway) and below 2^27; converting it to int32 truncates toward zero, which is the model's
//     truncation onto the grid. Sixteen such terms add below 2^31 in int32; the two halves of a
//     step and c's term add exactly in fp64. Steps with no term below the grid skip all this and
//     add exactly in fp64 or fp32 FMAs (the exact way, Mxf8f6f4Panel).
//   Both: the exact sum times 2^(E_max - F) is an exact fp64 value; it is rounded toward zero to
//     fp32 by clearing the 29 fp64 fraction bits fp32 lacks (or, below 2^-126, truncating onto
//     fp32's subnormal grid 2^-149) and converting, which is then exact; 2^128 and beyond
//     converts to Inf as MMA-Sim's conversion does. A zero sum is +0 (the sum starts at +0).
// Layout: B is packed once into panels of one vector's columns ([k][lane]); a unit of work is 64
// rows of D, which walk every panel kLaneRows rows at a time, so the bits do not depend on the
// thread count.
#include "sim/gemm/block_scaled_lanes.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "sim/gemm/block_scaled_terms.hpp"
#include "sim/parallel.hpp"

#ifndef FP8LAB_SIM_GEMM_BLOCK_SCALED_LANES_DECODE
#define FP8LAB_SIM_GEMM_BLOCK_SCALED_LANES_DECODE
namespace fp8lab::sim::gemm_detail {

// An operand decoded for the lanes, its rows interleaved by `lanes`: entry w of row r of a
// column of width W (k, groups or blocks) is at ((r / lanes) W + w) lanes + r % lanes, so that
// lanes = 1 is row-major (A, whose rows are broadcast) and lanes = one vector gives B's panels
// ([panel][w][lane], a vector's columns of D per load). Rows past `outer` up to a multiple of
// `pad_rows` are zero.
struct LaneOperand {
  std::int64_t outer = 0, k = 0, block = 0, blocks = 0, groups = 0;
  // mxf8f6f4: the element's value; mxf4nvf4: 2x it times its scale's significand (an integer),
  // or, folded (fold_scales), the element's value times its scale's (exact: at most 8 bits)
  std::vector<float> value;
  // mxf8f6f4: e of a nonzero element, else kZeroElementExponent; in B's panels four entries of K
  // a lane ([panel][k / 4][lane][k % 4]), so that one 32-bit broadcast of A's row holds the same
  // four
  std::vector<std::int8_t> exponent;
  std::vector<std::uint32_t> nonzero;  // mxf4nvf4: per group of 16, bit i set where i is nonzero
  std::vector<std::int32_t> scale_e;
  std::vector<std::uint8_t> special;  // per row (row-major): a NaN or infinite element or scale
  // mxf8f6f4's exact steps (Mxf8f6f4Panel): the element's value times its scale's, in fp64
  // (exact), laid out as value
  std::vector<double> scaled;
  // The same in fp32 where the scale exponent is in [-kNarrowScale, kNarrowScale] (every element
  // times its scale is then a normal fp32 value, exact), else 0
  std::vector<float> scaled32;
  // mxf8f6f4, per column ([panel][block], lanes = 1: per row and block) of one vector's rows:
  // the least exponent of a nonzero element's lowest set bit plus the scale exponent (L), and
  // the largest e of a nonzero element plus the scale exponent (U; |value| < 2^(U + 1)), over
  // the block and the vector's rows: step_low the least L, step_spread the largest U - L;
  // panel_top the largest U over the panel's blocks. A block with no nonzero element takes
  // L = kEmptyLow, U = kEmptyTop (every bound below then holds for its zero products).
  std::vector<std::int32_t> step_low, step_spread, panel_top;
  // step_spread where every row of the column has its scaled32 values, else kNotNarrow
  std::vector<std::int32_t> step_spread32;
  std::vector<std::int32_t> block_low, block_top;  // L and U per entry (at(r, blocks, j))
  // mxf8f6f4, per entry of the block columns (at(r, blocks, j)): 2^-U and 2^L in fp64
  std::vector<double> pow_top, pow_low;
  // mxf8f6f4: what fill_mxf8f6f4 needs to fill value and exponent (the general steps), scaled
  // (fp64 exact steps) or scaled32 (fp32 ones) when a step first needs them; decode_lanes sizes
  // them and fills the bounds only.
  struct Source {
    const BlockScaledOperand* x = nullptr;
    std::size_t lanes = 0, rows = 0;
    float value[256];
    double value64[256];
    std::int8_t exponent[256];
    double scale_pow[256];
    std::int32_t scale_e[256];
  } source;
};

// L and U (LaneOperand::step_low) of a block without a nonzero element: 2^-U and 2^L stay
// finite fp64 values, U - L and L + L' stay far below the bounds Mxf8f6f4Panel tests.
inline constexpr int kEmptyLow = 400, kEmptyTop = -400;
// LaneOperand::scaled32: scale exponents within +-100 keep every element (2^-17 to 2^16 in
// magnitude) times its scale a normal fp32 value; kNotNarrow rules a block's steps out of the
// fp32 sums (Mxf8f6f4Panel).
inline constexpr int kNarrowScale = 100, kNotNarrow = 1000;
// The largest U - L of a step whose products add exactly in fp32: 32 products, each a multiple
// of 2^L below 2^(U + 2), have partial sums below 2^(U + 7), 24 bits above 2^L at U - L = 17.
inline constexpr int kNarrowSpread = 17;

// Scale exponents (block_scale_exponent) of a mxf4nvf4 pair between which the group products
// a s_a b s_b may be formed in fp32 (the folded values of LaneOperand::value): every group term
// is then an exact fp32 sum of 16 such products. A product is (2a m_a)(2b m_b) 2^(E - 8) with
// E = e_sa + e_sb and |2a m_a| <= 180, a group's sum below 2^19 2^(E - 8): with E in
// [-110, 115] every partial sum is a normal fp32 multiple of 2^(E - 8) below 2^127, and
// 2^(8 - E) (which gives a term back its integer dot product) is a normal fp32 too. A folded
// element a s_a is below 2^(e_sa + 4): e_sa <= 120 keeps it finite.
inline constexpr int kFoldMinExponent = -110, kFoldMaxExponent = 115, kFoldMaxScale = 120;

// The least and largest scale exponent of x's finite scale bytes.
inline void scale_exponent_range(const BlockScaledOperand& x, int& lo, int& hi) {
  bool seen[256] = {};
  for (const std::uint8_t s : x.scales) seen[s] = true;
  lo = 0;
  hi = 0;
  bool first = true;
  for (int c = 0; c < 256; ++c) {
    const auto byte = static_cast<std::uint8_t>(c);
    if (!seen[c] || block_scale_term(byte, x.scale_type).special) continue;
    const int e = block_scale_exponent(byte, x.scale_type);
    lo = first ? e : std::min(lo, e);
    hi = first ? e : std::max(hi, e);
    first = false;
  }
}

// Whether a mxf4nvf4 pair's values may be folded with their scales (kFoldMinExponent above).
inline bool fold_scales(const BlockScaledOperand& a, const BlockScaledOperand& b) {
  int a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;
  scale_exponent_range(a, a_lo, a_hi);
  scale_exponent_range(b, b_lo, b_hi);
  return a_lo + b_lo >= kFoldMinExponent && a_hi + b_hi <= kFoldMaxExponent &&
         std::max(a_hi, b_hi) <= kFoldMaxScale;
}

// A zero element's exponent in LaneOperand::exponent: with any other exponent (-14..15) its sum
// stays below -84, and two of them saturate at -128.
inline constexpr std::int8_t kZeroElementExponent = -100;

// 2^e as fp64, e in [-1022, 1023].
inline double pow2(int e) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

// decode_lanes' mxf8f6f4 pass: for each column of `lanes` rows (rows past x.outer are zero
// elements) and block, the codes' table entries, `lanes` rows at a time per k, so that the
// stores of a column's panel are contiguous; then the bounds of the exact steps.
inline void decode_mxf8f6f4(const BlockScaledOperand& x, std::size_t lanes, std::size_t rows,
                            const float* value, const std::int8_t* exponent,
                            const std::uint8_t* special, bool any_special_code,
                            const std::int32_t* code_low, const std::int32_t* code_top,
                            const std::int32_t* scale_e, const std::uint8_t* scale_special,
                            const double* scale_pow, LaneOperand& p) {
  const auto k = static_cast<std::size_t>(x.k), blocks = static_cast<std::size_t>(p.blocks);
  const auto block = static_cast<std::size_t>(x.block);
  const auto outer = static_cast<std::size_t>(x.outer);
  LaneOperand::Source& src = p.source;
  src.x = &x;
  src.lanes = lanes;
  src.rows = rows;
  for (int c = 0; c < 256; ++c) {
    src.value[c] = value[c];
    src.value64[c] = value[c];
    src.exponent[c] = exponent[c];
    src.scale_pow[c] = scale_pow[c];
    src.scale_e[c] = scale_e[c];
  }
  p.scaled.resize(rows * k);
  p.scaled32.resize(rows * k);
  p.step_spread32.resize(rows / lanes * blocks);
  p.block_low.resize(rows * blocks);
  p.block_top.resize(rows * blocks);
  std::fill(p.special.begin(), p.special.end(), std::uint8_t{0});
  if (block % 4 != 0) throw std::logic_error("decode_mxf8f6f4: block not a multiple of 4");
  for (std::size_t col = 0; col < rows / lanes; ++col) {
    const std::size_t r0 = col * lanes;
    for (std::size_t j = 0; j < blocks; ++j) {
      const std::size_t at_block = (col * blocks + j) * lanes;
      std::int32_t spread32 = kEmptyTop - kEmptyLow;  // fp32 sums: (LaneOperand::step_spread32)
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        const std::size_t r = r0 + lane;
        std::int32_t low = kEmptyLow, top = kEmptyTop, se = 0;
        if (r < outer) {
          const std::uint8_t scale = x.scales[r * blocks + j];
          se = scale_e[scale];
          const std::uint8_t* codes = x.codes.data() + r * k + j * block;
          std::uint8_t any = scale_special[scale];
          for (std::size_t i = 0; i < block; ++i) {
            low = std::min(low, code_low[codes[i]]);
            top = std::max(top, code_top[codes[i]]);
            if (any_special_code) any |= special[codes[i]];
          }
          p.special[r] = p.special[r] | any;
        }
        p.scale_e[at_block + lane] = se;
        const bool empty = top == kEmptyTop;
        const bool narrow = se >= -kNarrowScale && se <= kNarrowScale;
        p.block_low[at_block + lane] = empty ? kEmptyLow : low + se;
        p.block_top[at_block + lane] = empty ? kEmptyTop : top + se;
        spread32 =
            std::max(spread32, empty ? kEmptyTop - kEmptyLow : (narrow ? top - low : kNotNarrow));
      }
      p.step_spread32[col * blocks + j] = spread32;
    }
  }
  // Per column of `lanes` rows and block: the bounds Mxf8f6f4Panel's exact steps test.
  const std::size_t columns = rows / lanes;
  p.step_low.resize(columns * blocks);
  p.step_spread.resize(columns * blocks);
  p.panel_top.resize(columns);
  p.pow_top.resize(rows * blocks);
  p.pow_low.resize(rows * blocks);
  for (std::size_t col = 0; col < columns; ++col) {
    std::int32_t panel_top = kEmptyTop;
    for (std::size_t j = 0; j < blocks; ++j) {
      std::int32_t low = kEmptyLow, spread = kEmptyTop - kEmptyLow;
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        const std::size_t e = (col * blocks + j) * lanes + lane;
        low = std::min(low, p.block_low[e]);
        spread = std::max(spread, p.block_top[e] - p.block_low[e]);
        panel_top = std::max(panel_top, p.block_top[e]);
        p.pow_top[e] = pow2(-p.block_top[e]);
        p.pow_low[e] = pow2(p.block_low[e]);
      }
      p.step_low[col * blocks + j] = low;
      p.step_spread[col * blocks + j] = spread;
    }
    p.panel_top[col] = panel_top;
  }
}

// What decode_mxf8f6f4 leaves to the first step that needs it: kGeneral value and exponent,
// kWide scaled, kNarrow scaled32, each for every entry of p (padding rows as zero elements).
enum class Mxf8Fill : std::uint8_t { kGeneral, kWide, kNarrow };
inline void fill_mxf8f6f4(LaneOperand& p, Mxf8Fill what) {
  const LaneOperand::Source& src = p.source;
  const BlockScaledOperand& x = *src.x;
  const std::size_t lanes = src.lanes, rows = src.rows;
  const auto k = static_cast<std::size_t>(x.k), blocks = static_cast<std::size_t>(p.blocks);
  const auto block = static_cast<std::size_t>(x.block);
  const auto outer = static_cast<std::size_t>(x.outer);
  static const std::uint8_t kZeroCodes[64] = {};
  for (std::size_t col = 0; col < rows / lanes; ++col) {
    for (std::size_t j = 0; j < blocks; ++j) {
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        const std::size_t r = col * lanes + lane;
        const bool live = r < outer;
        const std::uint8_t scale = live ? x.scales[r * blocks + j] : std::uint8_t{127};
        const std::uint8_t* codes = live ? x.codes.data() + r * k + j * block : kZeroCodes;
        const std::size_t at = (col * k + j * block) * lanes + lane;
        if (what == Mxf8Fill::kGeneral) {
          float* to_value = p.value.data() + at;
          std::int8_t* to_exponent = p.exponent.data() + (col * k + j * block) * lanes + lane * 4;
          for (std::size_t i = 0; i < block; i += 4) {  // block: a multiple of 4
            for (std::size_t q = 0; q < 4; ++q) {
              to_value[q * lanes] = src.value[codes[i + q]];
              to_exponent[q] = src.exponent[codes[i + q]];
            }
            to_value += 4 * lanes;
            to_exponent += 4 * lanes;
          }
        } else if (what == Mxf8Fill::kWide) {
          const double pow = live ? src.scale_pow[scale] : 0.0;
          double* to = p.scaled.data() + at;
          for (std::size_t i = 0; i < block; ++i) to[i * lanes] = src.value64[codes[i]] * pow;
        } else {
          const int se = src.scale_e[scale];
          const float pow = live && se >= -kNarrowScale && se <= kNarrowScale
                                ? static_cast<float>(src.scale_pow[scale])
                                : 0.0f;
          float* to = p.scaled32.data() + at;
          for (std::size_t i = 0; i < block; ++i) to[i * lanes] = src.value[codes[i]] * pow;
        }
      }
    }
  }
}

// The fills of one call's two operands, each done once by the first step that needs it (from
// any thread).
struct Mxf8Fills {
  LaneOperand *a = nullptr, *b = nullptr;
  std::once_flag general, wide, narrow;
  void need(Mxf8Fill what) {
    std::once_flag& flag = what == Mxf8Fill::kGeneral ? general
                           : what == Mxf8Fill::kWide  ? wide
                                                      : narrow;
    std::call_once(flag, [this, what] {
      fill_mxf8f6f4(*a, what);
      fill_mxf8f6f4(*b, what);
    });
  }
};

// decode_lanes' mxf4nvf4 pass over one row of an operand without special
// codes: for each group of 16 codes (k of them, one scale byte a `block`), dst[i] =
// value[code i] * factor[scale byte] and the group's nonzero mask (bit i where value[code i] != 0;
// 0 where the factor is 0), row-major. Fp4RowLanes below does it in lanes.
using Fp4Row = void (*)(const std::uint8_t* codes, const std::uint8_t* scales, std::size_t k,
                        std::size_t block, const float* value, const float* factor, float* dst,
                        std::uint32_t* masks);

// Decodes x into p (layout above), whose vectors keep their capacity from earlier calls
// (LaneScratch). fold (mxf4nvf4 only): the values are the elements times their scales. fp4_row
// (mxf4nvf4 only, required): the values and masks of a row, spread into B's panels after.
template <bool kFp4>
void decode_lanes(const BlockScaledOperand& x, std::size_t lanes, std::int64_t pad_rows, bool fold,
                  LaneOperand& p, Fp4Row fp4_row = nullptr) {
  p.outer = x.outer;
  p.k = x.k;
  p.block = x.block;
  p.blocks = x.k / x.block;
  p.groups = x.k / kMxf4Nvf4GroupK;
  // Per code (and per scale byte): the columns' entries, looked up once per element.
  float value[256], scale_m[256], scale_value[256];
  std::int8_t exponent[256];
  std::int32_t scale_e[256];
  std::uint8_t special[256], scale_special[256];
  // mxf8f6f4: a nonzero element's lowest set bit's exponent and its e (kEmptyLow / kEmptyTop for
  // a zero or special one), and 2^(scale exponent) in fp64
  std::int32_t code_low[256], code_top[256];
  double scale_pow[256];
  bool any_special_code = false;
  const auto table = block_element_table(x.format);
  for (int c = 0; c < 256; ++c) {
    const BlockTerm& t = table[c];
    special[c] = t.special ? 1 : 0;
    any_special_code = any_special_code || t.special;
    value[c] = t.special ? 0.0f : (kFp4 && !fold ? 2.0f : 1.0f) * t.value;
    exponent[c] = t.m == 0 || t.special ? kZeroElementExponent : t.e;
    const auto byte = static_cast<std::uint8_t>(c);
    const BlockTerm s = block_scale_term(byte, x.scale_type);
    scale_special[c] = s.special ? 1 : 0;
    scale_m[c] = s.special ? 0.0f : s.m;
    scale_value[c] = s.special ? 0.0f : s.value;
    scale_e[c] = block_scale_exponent(byte, x.scale_type);
    scale_pow[c] = pow2(scale_e[c]);
    const bool zero = t.m == 0 || t.special;
    // value = m 2^(e - 3) with |m| <= 15: its lowest set bit is 2^(e - 3 + ctz(|m|))
    code_low[c] = zero ? kEmptyLow
                       : t.e - 3 + std::countr_zero(static_cast<unsigned>(std::abs(t.m)));
    code_top[c] = zero ? kEmptyTop : t.e;
  }
  const auto k = static_cast<std::size_t>(x.k), blocks = static_cast<std::size_t>(p.blocks);
  const auto groups = static_cast<std::size_t>(p.groups), block = static_cast<std::size_t>(x.block);
  const auto rows = static_cast<std::size_t>((x.outer + pad_rows - 1) / pad_rows * pad_rows);
  p.value.resize(rows * k);
  p.exponent.resize(kFp4 ? 0 : rows * k);
  p.nonzero.resize(kFp4 ? rows * groups : 0);
  p.scale_e.resize(rows * blocks);
  p.special.resize(static_cast<std::size_t>(x.outer));
  // Where entry w of row r goes in a column of width `width`.
  const auto at = [lanes](std::size_t r, std::size_t width, std::size_t w) {
    return ((r / lanes) * width + w) * lanes + r % lanes;
  };
  if constexpr (!kFp4) {
    decode_mxf8f6f4(x, lanes, rows, value, exponent, special, any_special_code, code_low, code_top,
                    scale_e, scale_special, scale_pow, p);
    return;
  }
  // Row by row (fp4_row), block by block. mxf4nvf4: each 2x-value times its scale's significand
  // (an integer <= 12 * 15), so that a group's dot product is already its term
  // (<= 16 * 180 * 180 < 2^20, exact in fp32); a zero scale makes its elements 0, so the nonzero
  // masks also say when a scale is zero. E2M1 has no special codes, so a row's values and masks
  // follow from its codes and scales alone.
  if (fp4_row == nullptr || any_special_code) {
    throw std::logic_error("decode_lanes: mxf4nvf4 takes E2M1 codes and a row decoder");
  }
  const float* factor = fold ? scale_value : scale_m;
  // lanes > 1: a panel's rows decoded row-major into these, then written into the panel k by k
  // (each store of a row's value straight into its lane was a cache line apart from the last)
  std::vector<float> panel_value(lanes == 1 ? 0 : lanes * k);
  std::vector<std::uint32_t> row_mask(lanes == 1 ? 0 : groups);
  const auto outer = static_cast<std::size_t>(x.outer);
  for (std::size_t r = 0; r < outer; ++r) {
    const std::uint8_t* scales = x.scales.data() + r * blocks;
    std::uint8_t any = 0;
    for (std::size_t j = 0; j < blocks; ++j) {
      p.scale_e[at(r, blocks, j)] = scale_e[scales[j]];
      any |= scale_special[scales[j]];
    }
    p.special[r] = any;
    const std::uint8_t* codes = x.codes.data() + r * k;
    if (lanes == 1) {
      fp4_row(codes, scales, k, block, value, factor, p.value.data() + r * k,
              p.nonzero.data() + r * groups);
      continue;
    }
    const std::size_t lane = r % lanes;
    fp4_row(codes, scales, k, block, value, factor, panel_value.data() + lane * k, row_mask.data());
    std::uint32_t* masks = p.nonzero.data() + at(r, groups, 0);
    for (std::size_t g = 0; g < groups; ++g) masks[g * lanes] = row_mask[g];
    if (lane + 1 < lanes && r + 1 < outer) continue;
    // The panel's last row: its rows (lanes of them, or up to outer) into [k][lane].
    const std::size_t filled = lane + 1;
    float* to = p.value.data() + at(r - lane, k, 0);
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t l = 0; l < filled; ++l) to[i * lanes + l] = panel_value[l * k + i];
    }
  }
  // The padding rows: zero elements (their outputs are computed and dropped).
  for (std::size_t r = static_cast<std::size_t>(x.outer); r < rows; ++r) {
    for (std::size_t i = 0; i < k; ++i) p.value[at(r, k, i)] = 0.0f;
    for (std::size_t g = 0; g < groups; ++g) p.nonzero[at(r, groups, g)] = 0;
    for (std::size_t j = 0; j < blocks; ++j) p.scale_e[at(r, blocks, j)] = 0;
  }
}

// The buffers of one call, kept per thread between calls: a training step calls the GEMM with the
// same shapes again and again, and fresh multi-megabyte vectors would cost their page faults (and
// zero-filling) every time. Beyond kKeptScratchBytes they are freed after the call, so that one
// large GEMM does not pin its decoded operands to the thread.
struct LaneScratch {
  LaneOperand a, b;

  void release_if_large() {
    constexpr std::size_t kKeptScratchBytes = std::size_t{64} << 20;
    std::size_t bytes = 0;
    for (const LaneOperand* x : {&a, &b}) {
      bytes += x->value.capacity() * sizeof(float) + x->exponent.capacity() +
               x->nonzero.capacity() * sizeof(std::uint32_t) +
               x->scale_e.capacity() * sizeof(std::int32_t) + x->special.capacity() +
               (x->scaled.capacity() + x->pow_top.capacity() + x->pow_low.capacity()) *
                   sizeof(double) +
               x->scaled32.capacity() * sizeof(float) +
               x->step_spread32.capacity() * sizeof(std::int32_t) +
               (x->step_low.capacity() + x->step_spread.capacity() + x->panel_top.capacity() +
                x->block_low.capacity() + x->block_top.capacity()) *
                   sizeof(std::int32_t);
    }
    if (bytes > kKeptScratchBytes) a = b = LaneOperand{};
  }
};

// Rows of D per unit of work (threads take whole units).
inline constexpr std::int64_t kLaneUnitRows = 64;

}  // namespace fp8lab::sim::gemm_detail
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/block_scaled_lanes.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/gemm/tile_frame.hpp"
#include "sim/trunc_to_int-inl.h"

FP8LAB_GEMM_TILES_BEGIN;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using DD = hn::ScalableTag<double>;
using DFH = hn::Rebind<float, DD>;  // half a float vector, one lane per double lane
using DIH = hn::Rebind<std::int32_t, DD>;
using DI64 = hn::RebindToSigned<DD>;
using DU64 = hn::RebindToUnsigned<DD>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;
inline constexpr std::size_t kMaxLanes = hn::MaxLanes(DF());

// Fp4Row in lanes (decode_lanes): a vector of codes at a time, their values looked up in the
// table's first 16 entries (block_scaled_gemm checks every E2M1 code below 16) and multiplied by
// the block's factor, the same fp32 product as the loop it replaced. With 16 lanes the lookup is
// one permute of a register: a gather there took over half of this function's samples on an Ice
// Lake Xeon VM (why gathers are that slow there was not established).
void Fp4RowLanes(const std::uint8_t* codes, const std::uint8_t* scales, std::size_t k,
                 std::size_t block, const float* value, const float* factor, float* dst,
                 std::uint32_t* masks) {
  const DF df;
  const DI di;
  const hn::Rebind<std::uint8_t, DI> d8;
  const std::size_t l = hn::Lanes(df);
  static_assert(kMaxLanes <= kMxf4Nvf4GroupK && kMxf4Nvf4GroupK % kMaxLanes == 0);
  constexpr bool kPermute = kMaxLanes == kMxf4Nvf4GroupK;
  const VF table = kPermute ? hn::LoadU(df, value) : hn::Zero(df);
  const auto lookup = [&](hn::Vec<decltype(d8)> code) HWY_ATTR {
    const VI index = hn::PromoteTo(di, code);
    if constexpr (kPermute) return hn::TableLookupLanes(table, hn::IndicesFromVec(df, index));
    return hn::GatherIndex(df, value, index);
  };
  for (std::size_t j = 0; j * block < k; ++j) {
    const float f = factor[scales[j]];
    const VF m = hn::Set(df, f);
    for (std::size_t g = j * block; g < (j + 1) * block; g += kMxf4Nvf4GroupK) {
      std::uint32_t mask = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(kMxf4Nvf4GroupK); i += l) {
        const VF v = lookup(hn::LoadU(d8, codes + g + i));
        hn::StoreU(hn::Mul(v, m), df, dst + g + i);
        std::uint8_t bits[8] = {};
        hn::StoreMaskBits(df, hn::Ne(v, hn::Zero(df)), bits);
        mask |= (std::uint32_t{bits[0]} | std::uint32_t{bits[1]} << 8) << i;
      }
      masks[g / kMxf4Nvf4GroupK] = f != 0.0f ? mask : 0;
    }
  }
}

// Rows of D a micro-tile keeps in registers against one vector of B's columns: enough independent
// FMA chains to keep both FMA ports busy where there are registers for them (AVX-512 has 32).
#if HWY_TARGET <= HWY_AVX3
inline constexpr std::int64_t kLaneRows = 8;
#else
inline constexpr std::int64_t kLaneRows = 4;
#endif
static_assert(kLaneUnitRows % kLaneRows == 0);

// 2^e for e in [-126, 127].
HWY_INLINE VF Pow2(VI e) {
  return hn::BitCast(DF(), hn::ShiftLeft<23>(hn::Add(e, hn::Set(DI(), 127))));
}

HWY_INLINE VI Clamp(VI v, int lo, int hi) {
  return hn::Min(hn::Max(v, hn::Set(DI(), lo)), hn::Set(DI(), hi));
}

using fp8lab::sim::HWY_NAMESPACE::TruncToInt;

// c's exponent e as gemm_detail::fp32_term gives it (-126 for a subnormal), or zero_exponent
// where c is +-0 (MMA-Sim's e_zero).
HWY_INLINE VI Fp32Exponent(VF c, int zero_exponent) {
  const DI di;
  const VI field = hn::And(hn::ShiftRight<23>(hn::BitCast(di, c)), hn::Set(di, 0xFF));
  const VI e = hn::Max(hn::Sub(field, hn::Set(di, 127)), hn::Set(di, -126));
  return hn::IfThenElse(hn::RebindMask(di, hn::Eq(c, hn::Zero(DF()))), hn::Set(di, zero_exponent),
                        e);
}

// c's term on the grid 2^(E_max - fraction_bits) where E_max sits so far within fp32's range
// that 2^(F - E_max) is a normal fp32 (RangeOk): trunc(c * 2^(F - E_max)), exact (c < 2^(E_max + 1),
// so the product is below 2^(F + 1); a product below 1 may round as a subnormal but truncates to
// 0 either way). Otherwise from c's significand m_c (< 2^24) as m_c 2^(e_c - 23 + F - E_max), with
// the power of two clamped where the term is 0 anyway.
HWY_INLINE VF CTerm(VF c, VI e_max, int fraction_bits, int zero_exponent, bool range_ok) {
  const DF df;
  const DI di;
  if (range_ok) return hn::Trunc(hn::Mul(c, Pow2(hn::Sub(hn::Set(di, fraction_bits), e_max))));
  const VI bits = hn::BitCast(di, c);
  const VI field = hn::And(hn::ShiftRight<23>(bits), hn::Set(di, 0xFF));
  const VI magnitude =
      hn::Or(hn::And(bits, hn::Set(di, 0x7FFFFF)),
             hn::IfThenElseZero(hn::Ne(field, hn::Zero(di)), hn::Set(di, 0x800000)));
  const VI m = hn::IfThenElse(hn::Lt(bits, hn::Zero(di)), hn::Neg(magnitude), magnitude);
  const VI shift =
      hn::Sub(hn::Add(Fp32Exponent(c, zero_exponent), hn::Set(di, fraction_bits - 23)), e_max);
  return hn::Trunc(hn::Mul(hn::ConvertTo(df, m), Pow2(Clamp(shift, -64, fraction_bits - 23))));
}

// Whether 2^(E_max - F) and 2^(F - E_max) are normal fp32 values in every lane: FinishStep's and
// CTerm's fast forms hold (the usual case; the others take the general forms).
HWY_INLINE bool RangeOk(VI e_max, int fraction_bits) {
  const DI di;
  const VI scale_e = hn::Sub(e_max, hn::Set(di, fraction_bits));
  return hn::AllTrue(
      di, hn::And(hn::Gt(scale_e, hn::Set(di, -127)), hn::Lt(scale_e, hn::Set(di, 127))));
}

using VD = hn::Vec<DD>;

// The two halves of a vector's lanes, widened exactly into d's lanes (low lanes in lo).
template <class D, class V>
HWY_INLINE void Promote(D d, V v, hn::Vec<D>& lo, hn::Vec<D>& hi) {
#if HWY_TARGET == HWY_SCALAR
  lo = hn::PromoteTo(d, v);
  hi = hn::Zero(d);
#else
  const hn::Half<hn::DFromV<V> > half;
  lo = hn::PromoteTo(d, hn::LowerHalf(half, v));
  hi = hn::PromoteTo(d, hn::UpperHalf(half, v));
#endif
}

// Adds v's lanes (integers below 2^53) to the fp64 halves lo, hi: exact.
template <class V>
HWY_INLINE void AddExact(V v, VD& lo, VD& hi) {
  VD l, h;
  Promote(DD(), v, l, h);
  lo = hn::Add(lo, l);
  hi = hn::Add(hi, h);
}

// An exact fp64 value rounded toward zero to fp32, as a fp64 that converts exactly: the 29
// fraction bits fp32 lacks cleared, or below 2^-126 truncated onto fp32's subnormal grid 2^-149.
HWY_INLINE VD TowardZero(VD v) {
  const DD dd;
  const auto keep24 = hn::BitCast(dd, hn::Set(DU64(), ~((std::uint64_t{1} << 29) - 1)));
  const VD subnormal = hn::Mul(hn::Trunc(hn::Mul(v, hn::Set(dd, 0x1p149))), hn::Set(dd, 0x1p-149));
  return hn::IfThenElse(hn::Lt(hn::Abs(v), hn::Set(dd, 0x1p-126)), subnormal, hn::And(v, keep24));
}

// A step's result: the exact sum (lo, hi halves of the lanes, integers on the grid, +0 for a zero
// sum: the sums start at +0) times 2^(E_max - fraction_bits), rounded toward zero to fp32; 2^128
// and beyond gives Inf, which the lanes leave to the reference (bad).
HWY_INLINE VF FinishStep(VD lo, [[maybe_unused]] VD hi, VI e_max, int fraction_bits, bool range_ok,
                         VI& bad) {
  const DF df;
  const DD dd;
  const DI64 di64;
#if HWY_TARGET != HWY_SCALAR
  if (range_ok) {
    // The integer sum cut to 24 significant bits (toward zero; exact as fp32) times 2^(E_max - F)
    // in fp32 is exact (a nonzero result is >= 2^-126) and overflows to Inf exactly where the
    // value reaches 2^128.
    const DI di;
    const auto keep24 = hn::BitCast(dd, hn::Set(DU64(), ~((std::uint64_t{1} << 29) - 1)));
    const hn::Half<DF> half;
    const VF sum24 = hn::Combine(df, hn::DemoteTo(half, hn::And(hi, keep24)),
                                 hn::DemoteTo(half, hn::And(lo, keep24)));
    const VF result = hn::Mul(sum24, Pow2(hn::Sub(e_max, hn::Set(di, fraction_bits))));
    const auto inf = hn::Eq(hn::Abs(result), hn::Set(df, HUGE_VALF));
    bad = hn::Or(bad, hn::VecFromMask(di, hn::RebindMask(di, inf)));
    return result;
  }
#else
  (void)range_ok;
#endif
  // 2^(E_max - F) as fp64: E_max - F + 1023 in the exponent field.
  hn::Vec<DI64> e_lo, e_hi;
  Promote(di64, hn::Add(e_max, hn::Set(DI(), 1023 - fraction_bits)), e_lo, e_hi);
  const VD scale_lo = hn::BitCast(dd, hn::ShiftLeft<52>(e_lo));
  const VD scale_hi = hn::BitCast(dd, hn::ShiftLeft<52>(e_hi));
  const VD v_lo = hn::Mul(lo, scale_lo);
#if HWY_TARGET == HWY_SCALAR
  (void)scale_hi;
  // Highway's scalar DemoteTo saturates to FLT_MAX: the conversion by hand.
  const double v = hn::GetLane(TowardZero(v_lo));
  const VF result = hn::Set(df, std::fabs(v) >= 0x1p128
                                    ? std::copysign(HUGE_VALF, static_cast<float>(v))
                                    : static_cast<float>(v));
#else
  const VD v_hi = hn::Mul(hi, scale_hi);
  const hn::Half<DF> half;
  const VF result =
      hn::Combine(df, hn::DemoteTo(half, TowardZero(v_hi)), hn::DemoteTo(half, TowardZero(v_lo)));
#endif
  const auto inf = hn::Eq(hn::Abs(result), hn::Set(df, HUGE_VALF));
  bad = hn::Or(bad, hn::VecFromMask(DI(), hn::RebindMask(DI(), inf)));
  return result;
}

struct LaneArgs {
  const LaneOperand* a;
  std::int64_t n = 0;
  // B packed per panel of `lanes` columns: [panel][k][lane], [panel][block][lane],
  // [panel][group][lane] (columns past N are zero).
  const float* b_value;
  const std::int8_t* b_exponent;
  const double* b_scaled;
  const float* b_scaled32;
  const std::int32_t*
      b_step_spread32;  // mxf8f6f4: LaneOperand::scaled, bounds per [panel][block](, [lane])
  const std::int32_t *b_step_low, *b_step_spread, *b_panel_top;
  const double *b_pow_top, *b_pow_low;
  const std::uint32_t* b_nonzero;
  const std::int32_t* b_scale_e;
  const std::uint8_t* b_special;
  std::span<const float> c;
  std::span<float> out;
  std::span<std::uint8_t> left;
  std::int64_t* counts;  // mxf8f6f4: per unit, the exact and the general steps (Mxf8f6f4Panel)
  Mxf8Fills* fills;      // mxf8f6f4
};

// kMxf4Nvf4: the steps of rows [r0, r0 + kLaneRows) against one panel, c ([row][lane]) chained.
// kFolded: the values carry their scales (fold_scales), so that a group's dot product is its term's
// value, dot 2^(E - 8). Where every group of a row's step has E >= E_max - 27 (the usual case:
// scales within 2^27 of each other and c not far above the products) and E_max is in RangeOk's
// range, no term has a bit below the grid 2^(E_max - 35): the step is then the exact fp64 sum of
// the values and of c truncated onto the grid, rounded toward zero, with no per-group alignment.
// Other rows take each dot product back to its integer (times 2^(8 - E), exact) and go the
// unfolded way.
template <bool kFolded>
HWY_INLINE void Mxf4Nvf4Panel(const LaneArgs& t, std::int64_t r0, std::int64_t panel, float* c,
                              VI* bad) {
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(df);
  const LaneOperand& a = *t.a;
  const std::int64_t k = a.k, groups = a.groups, blocks = a.blocks, block = a.block;
  constexpr int kGroups = static_cast<int>(kMxf4Nvf4StepK / kMxf4Nvf4GroupK);
  constexpr int kF = kMxf4Nvf4FractionBits;
  const float* bv = t.b_value + panel * k * static_cast<std::int64_t>(lanes);
  for (std::int64_t g0 = 0; g0 < groups; g0 += kGroups) {
    const int count = static_cast<int>(std::min<std::int64_t>(kGroups, groups - g0));
    // The exponents first (they need no dot product), so that each group's dot product goes
    // into the sums as soon as it is done. kFolded keeps only E_max and the least E of the
    // step's groups (zero terms included, which only makes the test below stricter).
    VI exponents[kLaneRows][kFolded ? 1 : kGroups];
    VI emax[kLaneRows], emin[kLaneRows];
    for (auto& x : emax) x = hn::Set(di, kMxf4Nvf4ZeroExponent);
    for (auto& x : emin) x = hn::Set(di, 1 << 20);
    // E of group g0 + g for row r against the panel: raw (the scales' sum) and with a zero
    // term's kMxf4Nvf4ZeroExponent.
    const auto group_exponent = [&](int g, std::int64_t r, VI& raw) HWY_ATTR {
      const std::int64_t s = (g0 + g) * kMxf4Nvf4GroupK / block;
      const VI b_e =
          hn::LoadU(di, t.b_scale_e + static_cast<std::size_t>(panel * blocks + s) * lanes);
      const VI b_nz = hn::BitCast(
          di, hn::LoadU(hn::RebindToUnsigned<DF>(),
                        t.b_nonzero + static_cast<std::size_t>(panel * groups + g0 + g) * lanes));
      const std::int64_t row = r0 + r;
      // A zero term: no nonzero product in the group, or a zero scale.
      const auto nz =
          hn::And(hn::Set(di, static_cast<std::int32_t>(a.nonzero[row * groups + g0 + g])), b_nz);
      raw = hn::Add(hn::Set(di, a.scale_e[row * blocks + s]), b_e);
      return hn::IfThenElse(hn::Eq(nz, hn::Zero(di)), hn::Set(di, kMxf4Nvf4ZeroExponent), raw);
    };
    for (int g = 0; g < count; ++g) {
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kLaneRows; ++r) {
        VI raw;
        const VI e = group_exponent(g, r, raw);
        if constexpr (kFolded) {
          emin[r] = hn::Min(emin[r], raw);
        } else {
          exponents[r][g] = e;
        }
        emax[r] = hn::Max(emax[r], e);
      }
    }
    VF cv[kLaneRows];
    bool range_ok[kLaneRows], exact[kLaneRows];
    bool all_exact = kFolded;
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      cv[r] = hn::Load(df, c + r * static_cast<std::int64_t>(kMaxLanes));
      emax[r] = hn::Max(emax[r], Fp32Exponent(cv[r], kMxf4Nvf4ZeroExponent));
      range_ok[r] = RangeOk(emax[r], kF);
      exact[r] = kFolded && range_ok[r] &&
                 hn::AllTrue(di, hn::Gt(emin[r], hn::Sub(emax[r], hn::Set(di, 28))));
      all_exact = all_exact && exact[r];
    }
    // The step's sums and results; kAllExact: every row exact (no branch per row and group).
    const auto sums = [&](auto all_exact_tag) HWY_ATTR {
      constexpr bool kAllExact = decltype(all_exact_tag)::value;
      VD lo[kLaneRows], hi[kLaneRows];
      for (std::int64_t r = 0; r < kLaneRows; ++r) lo[r] = hi[r] = hn::Zero(DD());
      for (int g = 0; g < count; ++g) {
        const std::int64_t k0 = (g0 + g) * kMxf4Nvf4GroupK;
        VF dot[kLaneRows];
        for (auto& x : dot) x = hn::Zero(df);
#pragma GCC unroll 16
        for (int i = 0; i < static_cast<int>(kMxf4Nvf4GroupK); ++i) {
          const std::int64_t kk = k0 + i;
          const VF b = hn::LoadU(df, bv + kk * static_cast<std::int64_t>(lanes));
#pragma GCC unroll 8
          for (std::int64_t r = 0; r < kLaneRows; ++r) {
            dot[r] = hn::MulAdd(hn::Set(df, a.value[(r0 + r) * k + kk]), b, dot[r]);
          }
        }
#pragma GCC unroll 8
        for (std::int64_t r = 0; r < kLaneRows; ++r) {
          if (kAllExact || exact[r]) {
            AddExact(dot[r], lo[r], hi[r]);
            continue;
          }
          // The dot product is the group's term (the values carry the scale significands,
          // decode_lanes), value term 2^(E - 8); on the grid 2^(E_max - 35) it is times
          // 2^(E - E_max + 27) (E <= E_max but for a folded zero term, whose product is 0;
          // below 2^-64 every term truncates to 0).
          VF term = dot[r];
          VI e;
          if constexpr (kFolded) {
            VI raw;
            e = group_exponent(g, r, raw);
            term = hn::Mul(term, Pow2(hn::Sub(hn::Set(di, 8), raw)));
          } else {
            e = exponents[r][g];
          }
          const VI shift = Clamp(hn::Add(hn::Sub(e, emax[r]), hn::Set(di, 27)), -64, 27);
          AddExact(hn::Trunc(hn::Mul(term, Pow2(shift))), lo[r], hi[r]);
        }
      }
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kLaneRows; ++r) {
        if (kAllExact || exact[r]) {
          // c truncated onto the grid, as a value (exact: c with its bits below the grid
          // cleared), and the value sum rounded toward zero (FinishStep's scale is 1).
          const VF c_value = hn::Mul(CTerm(cv[r], emax[r], kF, kMxf4Nvf4ZeroExponent, true),
                                     Pow2(hn::Sub(emax[r], hn::Set(di, kF))));
          AddExact(c_value, lo[r], hi[r]);
          hn::Store(FinishStep(lo[r], hi[r], hn::Set(di, kF), kF, true, bad[r]), df,
                    c + r * static_cast<std::int64_t>(kMaxLanes));
          continue;
        }
        AddExact(CTerm(cv[r], emax[r], kF, kMxf4Nvf4ZeroExponent, range_ok[r]), lo[r], hi[r]);
        hn::Store(FinishStep(lo[r], hi[r], emax[r], kF, range_ok[r], bad[r]), df,
                  c + r * static_cast<std::int64_t>(kMaxLanes));
      }
    };
    if (all_exact) {
      sums(std::true_type{});
    } else {
      sums(std::false_type{});
    }
  }
}

// kMxf8f6f4: the steps (one block of 32 each) of rows [r0, r0 + kLaneRows) against one panel.
//
// A step goes one of two ways, with the same bits. The general way computes E_max and truncates
// every product onto the grid 2^(E_max - 25) (general_step below). The exact way applies where
// no term of the step has a bit below that grid, so that the truncation is the identity and the
// step is the exact sum of c and the products, rounded toward zero: with L and U of each operand's
// block (LaneOperand::step_low; U bounds every product's E from above, L every product's lowest
// bit from below), a step of a row is exact in a lane when
//   (1) U - L <= 25 (with (4), E_max <= L + 25: every product's lowest bit, >= L, is on the grid),
//   (2) L >= -149 (on the grid of E_max = -133, a zero term's, too, and on fp32's subnormals),
//   (3) c is a multiple of 2^(U - 25) (c's term is on the grid of E_max = P <= U), and
//   (4) |c| < 2^(L + 26) (c's exponent e_c <= L + 25: the products are on the grid of E_max =
//       e_c; c itself, 24 bits, is on it since its lowest bit is >= e_c - 23),
// for E_max = max(P, e_c, -133), P the step's largest product E. (1) and (2) are tested per row
// on B's lane-wise worst case (LaneOperand::step_spread, step_low), (3) and (4) per lane. Then
// every partial sum is a multiple of 2^(U - 25) below 2^(U + 28) (|c| < 2^(L + 26) <= 2^(U + 26),
// 32 products each below 2^(U + 2)): exact in fp64, so fp64 FMAs of the values times their
// scales (LaneOperand::scaled, exact) give the step's exact sum; rounded toward zero to fp32 by
// clearing the 29 fraction bits fp32 lacks (a sum below 2^-126 is a multiple of 2^-149 by (2),
// an fp32 subnormal that clearing leaves as it is). c stays in fp64 between exact steps.
// Overflow: the exact way is taken only where no sum can reach 2^127 (c below 2^126 when the
// tile starts, and steps * 2^(U + 7) <= 2^126 for the largest U of the rows and the panel), so
// it never leaves an output. A step of the tile that fails a test in some row or lane goes the
// general way for all rows. Where moreover U - L <= kNarrowSpread in every row (and the scales
// allow LaneOperand::scaled32), the products' partial sums fit fp32's 24 bits (multiples of 2^L
// below 2^(U + 7)), so fp32 FMAs add them, half the fp64 work, and their sum joins c in fp64.
// counts[0], counts[1] and counts[2] count the exact, the general and the fp32 (narrow) steps.
HWY_INLINE void Mxf8f6f4Panel(const LaneArgs& t, std::int64_t r0, std::int64_t panel, float* c,
                              VI* bad, std::int64_t* counts) {
  const DF df;
  const DI di;
  const DD dd;
  const std::size_t lanes = hn::Lanes(df);
  const auto l = static_cast<std::int64_t>(lanes);
  const LaneOperand& a = *t.a;
  const std::int64_t k = a.k, steps = a.blocks;
  const float* bv = t.b_value + panel * k * l;
  const std::int8_t* be = t.b_exponent + panel * k * l;
  const auto general_step = [&](std::int64_t s) HWY_ATTR __attribute__((always_inline)) {
    const std::int64_t k0 = s * kMxf8f6f4StepK;
    // max(e_a + e_b) of the nonzero products (a sum below -64 means no nonzero product), in int8
    // lanes: four of K a 32-bit lane, then the largest of each lane's four bytes (sign-extended).
    VI top[kLaneRows];
#if HWY_TARGET == HWY_SCALAR
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      int most = -128;
      for (std::int64_t kk = k0; kk < k0 + kMxf8f6f4StepK; ++kk) {
        most = std::max(most, a.exponent[(r0 + r) * k + kk] + be[kk]);
      }
      top[r] = hn::Set(di, most);
    }
#else
    const hn::Repartition<std::int8_t, DF> di8;
    const hn::Repartition<std::int16_t, DF> di16;
    const hn::RebindToUnsigned<DI> du;
    hn::Vec<decltype(di8)> top8[kLaneRows];
    for (auto& x : top8) x = hn::Set(di8, -128);
#pragma GCC unroll 8
    for (int i = 0; i < static_cast<int>(kMxf8f6f4StepK / 4); ++i) {
      const std::int64_t kk = k0 + 4 * i;
      const auto b = hn::LoadU(di8, be + kk * l);
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kLaneRows; ++r) {
        std::uint32_t four;
        std::memcpy(&four, a.exponent.data() + (r0 + r) * k + kk, sizeof(four));
        top8[r] = hn::Max(top8[r], hn::SaturatedAdd(hn::BitCast(di8, hn::Set(du, four)), b));
      }
    }
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      const auto x16 = hn::BitCast(di16, top8[r]);
      const auto m16 = hn::Max(hn::ShiftRight<8>(x16), hn::ShiftRight<8>(hn::ShiftLeft<8>(x16)));
      const VI x32 = hn::BitCast(di, m16);
      top[r] = hn::Max(hn::ShiftRight<16>(x32), hn::ShiftRight<16>(hn::ShiftLeft<16>(x32)));
    }
#endif
    const VI b_e = hn::LoadU(di, t.b_scale_e + static_cast<std::size_t>(panel * steps + s) * lanes);
    VF grid[kLaneRows];
    VI e_max[kLaneRows];
    VF c_term[kLaneRows];
    bool range_ok[kLaneRows];
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      const VI scale_e = hn::Add(hn::Set(di, a.scale_e[(r0 + r) * steps + s]), b_e);
      const VI products = hn::IfThenElse(hn::Gt(top[r], hn::Set(di, -64)), hn::Add(top[r], scale_e),
                                         hn::Set(di, kMxf8f6f4ZeroExponent));
      const VF cv = hn::Load(df, c + r * static_cast<std::int64_t>(kMaxLanes));
      const VI emax = hn::Max(products, Fp32Exponent(cv, kMxf8f6f4ZeroExponent));
      e_max[r] = emax;
      range_ok[r] = RangeOk(emax, kMxf8f6f4FractionBits);
      // A product a b (value m_a m_b 2^(e_a + e_b - 6)) on the grid 2^(E_max - 25): times
      // 2^(25 + e_sa + e_sb - E_max), at most 2^(25 - E_max) <= 2^53 for a nonzero product;
      // below 2^-100 every product truncates to 0.
      grid[r] = Pow2(Clamp(hn::Sub(hn::Add(scale_e, hn::Set(di, 25)), emax), -100, 100));
      c_term[r] = CTerm(cv, emax, kMxf8f6f4FractionBits, kMxf8f6f4ZeroExponent, range_ok[r]);
    }
    VD lo[kLaneRows], hi[kLaneRows];
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      lo[r] = hn::Zero(DD());
      hi[r] = hn::Zero(DD());
      AddExact(c_term[r], lo[r], hi[r]);
    }
    for (int half = 0; half < 2; ++half) {
      VI sum[kLaneRows];
      for (auto& x : sum) x = hn::Zero(di);
      const std::int64_t h0 = k0 + half * (kMxf8f6f4StepK / 2);
#pragma GCC unroll 16
      for (int i = 0; i < static_cast<int>(kMxf8f6f4StepK / 2); ++i) {
        const std::int64_t kk = h0 + i;
        const VF b = hn::LoadU(df, bv + kk * l);
#pragma GCC unroll 8
        for (std::int64_t r = 0; r < kLaneRows; ++r) {
          const VF x = hn::Mul(hn::Set(df, a.value[(r0 + r) * k + kk]), hn::Mul(b, grid[r]));
          sum[r] = hn::Add(sum[r], TruncToInt(x));
        }
      }
      for (std::int64_t r = 0; r < kLaneRows; ++r) AddExact(sum[r], lo[r], hi[r]);
    }
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      hn::Store(FinishStep(lo[r], hi[r], e_max[r], kMxf8f6f4FractionBits, range_ok[r], bad[r]), df,
                c + r * static_cast<std::int64_t>(kMaxLanes));
    }
  };
#if HWY_TARGET == HWY_SCALAR
  constexpr int kHalves = 1;
#else
  constexpr int kHalves = 2;
#endif
  const auto dl = static_cast<std::int64_t>(hn::Lanes(dd));  // lanes / kHalves
  // Whether the exact way may run at all (no overflow; comment above).
  int a_top = kEmptyTop;
  for (std::int64_t r = 0; r < kLaneRows; ++r) a_top = std::max(a_top, a.panel_top[r0 + r]);
  const int tile_top = a_top + t.b_panel_top[panel];
  bool exact_ok =
      steps > 0 &&
      tile_top + 7 + static_cast<int>(std::bit_width(static_cast<std::uint64_t>(steps))) <= 126;
  for (std::int64_t r = 0; r < kLaneRows && exact_ok; ++r) {
    exact_ok =
        hn::AllTrue(df, hn::Lt(hn::Abs(hn::Load(df, c + r * static_cast<std::int64_t>(kMaxLanes))),
                               hn::Set(df, 0x1p126f)));
  }
  // c in fp64 halves; -0 as +0 (the model's sum starts at +0; an exact step whose terms are all
  // zero would keep c's -0).
  VD cd[kLaneRows][kHalves];
  const auto load_c = [&]() HWY_ATTR {
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      VD lo, hi;
      Promote(dd, hn::Load(df, c + r * static_cast<std::int64_t>(kMaxLanes)), lo, hi);
      cd[r][0] = hn::Add(lo, hn::Zero(dd));
      if constexpr (kHalves == 2) cd[r][kHalves - 1] = hn::Add(hi, hn::Zero(dd));
    }
  };
  const auto store_c = [&]() HWY_ATTR {
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
#if HWY_TARGET == HWY_SCALAR
      hn::Store(hn::DemoteTo(DFH(), cd[r][0]), df, c + r * static_cast<std::int64_t>(kMaxLanes));
#else
      const hn::Half<DF> half;
      hn::Store(
          hn::Combine(df, hn::DemoteTo(half, cd[r][kHalves - 1]), hn::DemoteTo(half, cd[r][0])), df,
          c + r * static_cast<std::int64_t>(kMaxLanes));
#endif
    }
  };
  bool in_doubles = false;  // whether cd holds c (else the c array does)
  const auto keep24 = hn::BitCast(dd, hn::Set(DU64(), ~((std::uint64_t{1} << 29) - 1)));
  const double* bd = t.b_scaled + panel * k * l;
  for (std::int64_t s = 0; s < steps; ++s) {
    const std::int64_t k0 = s * kMxf8f6f4StepK;
    const std::int64_t b_at = panel * steps + s;
    bool exact = exact_ok, narrow = true;
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      const std::int64_t a_at = (r0 + r) * steps + s;
      exact = exact && a.step_spread[a_at] + t.b_step_spread[b_at] <= kMxf8f6f4FractionBits &&
              a.step_low[a_at] + t.b_step_low[b_at] >= -149;
      narrow = narrow && a.step_spread32[a_at] + t.b_step_spread32[b_at] <= kNarrowSpread;
    }
    if (exact) {
      if (!in_doubles) load_c();
      in_doubles = true;
      // (3) and (4) per lane: c 2^(25 - U) an integer, |c| < 2^(L + 26).
      hn::Mask<DD> ok = hn::FirstN(dd, hn::Lanes(dd));
      for (int h = 0; h < kHalves; ++h) {
        const VD b_top = hn::LoadU(dd, t.b_pow_top + b_at * l + h * dl);
        const VD b_low = hn::LoadU(dd, t.b_pow_low + b_at * l + h * dl);
        for (std::int64_t r = 0; r < kLaneRows; ++r) {
          const std::int64_t a_at = (r0 + r) * steps + s;
          const VD x = hn::Mul(cd[r][h], hn::Mul(hn::Set(dd, a.pow_top[a_at] * 0x1p25), b_top));
          const VD bound = hn::Mul(hn::Set(dd, a.pow_low[a_at] * 0x1p26), b_low);
          ok = hn::And(ok, hn::And(hn::Eq(hn::Round(x), x), hn::Lt(hn::Abs(cd[r][h]), bound)));
        }
      }
      exact = hn::AllTrue(dd, ok);
    }
    if (!exact) {
      t.fills->need(Mxf8Fill::kGeneral);
      if (in_doubles) store_c();
      in_doubles = false;
      general_step(s);
      ++counts[1];
      continue;
    }
    ++counts[0];
    if (narrow) {
      // The products' sum in fp32 (exact: above), then added to c in fp64.
      t.fills->need(Mxf8Fill::kNarrow);
      ++counts[2];
      VF sum[kLaneRows];
      for (auto& x : sum) x = hn::Zero(df);
#pragma GCC unroll 8
      for (int i = 0; i < static_cast<int>(kMxf8f6f4StepK); ++i) {
        const std::int64_t kk = k0 + i;
        const VF b = hn::LoadU(df, t.b_scaled32 + panel * k * l + kk * l);
#pragma GCC unroll 8
        for (std::int64_t r = 0; r < kLaneRows; ++r) {
          sum[r] = hn::MulAdd(hn::Set(df, a.scaled32[static_cast<std::size_t>((r0 + r) * k + kk)]),
                              b, sum[r]);
        }
      }
      for (std::int64_t r = 0; r < kLaneRows; ++r) {
        VD lo, hi;
        Promote(dd, sum[r], lo, hi);
        cd[r][0] = hn::And(hn::Add(cd[r][0], lo), keep24);
        if constexpr (kHalves == 2)
          cd[r][kHalves - 1] = hn::And(hn::Add(cd[r][kHalves - 1], hi), keep24);
      }
      continue;
    }
    t.fills->need(Mxf8Fill::kWide);
#pragma GCC unroll 8
    for (int i = 0; i < static_cast<int>(kMxf8f6f4StepK); ++i) {
      const std::int64_t kk = k0 + i;
      VD b[kHalves];
      for (int h = 0; h < kHalves; ++h) b[h] = hn::LoadU(dd, bd + kk * l + h * dl);
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < kLaneRows; ++r) {
        const VD x = hn::Set(dd, a.scaled[static_cast<std::size_t>((r0 + r) * k + kk)]);
        for (int h = 0; h < kHalves; ++h) cd[r][h] = hn::MulAdd(x, b[h], cd[r][h]);
      }
    }
    for (std::int64_t r = 0; r < kLaneRows; ++r) {
      for (int h = 0; h < kHalves; ++h) cd[r][h] = hn::And(cd[r][h], keep24);
    }
  }
  if (in_doubles) store_c();
}

// Rows [64 unit, 64 unit + 64) of D; returns whether it left any output to the reference.
template <bool kFp4, bool kFolded>
bool LaneUnit(const LaneArgs& t, std::int64_t unit) {
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(df);
  const std::int64_t m = t.a->outer, n = t.n;
  const auto l = static_cast<std::int64_t>(lanes);
  const std::int64_t panels = (n + l - 1) / l;
  const std::int64_t row_end = std::min(m, (unit + 1) * kLaneUnitRows);
  HWY_ALIGN float c[kLaneRows][kMaxLanes];
  HWY_ALIGN std::int32_t bad_lanes[kMaxLanes];
  bool any_left = false;
  for (std::int64_t panel = 0; panel < panels; ++panel) {
    const std::int64_t col0 = panel * l;
    const bool full = col0 + l <= n;
    bool panel_special = false;
    for (std::int64_t col = col0; col < std::min(n, col0 + l); ++col) {
      panel_special = panel_special || t.b_special[col] != 0;
    }
    for (std::int64_t r0 = unit * kLaneUnitRows; r0 < row_end; r0 += kLaneRows) {
      // a is padded to whole micro-tiles (zero rows); c starts as C or +0.
      for (std::int64_t r = 0; r < kLaneRows; ++r) {
        const std::int64_t row = r0 + r;
        if (t.c.empty()) {
          hn::Store(hn::Zero(df), df, c[r]);
          continue;
        }
        if (full && row < m) {
          hn::Store(hn::LoadU(df, t.c.data() + row * n + col0), df, c[r]);
          continue;
        }
        for (std::int64_t j = 0; j < l; ++j) {
          const std::int64_t col = col0 + j;
          c[r][j] = row < m && col < n && !t.c.empty() ? t.c[row * n + col] : 0.0f;
        }
      }
      VI bad[kLaneRows];
      for (auto& x : bad) x = hn::Zero(di);
      if constexpr (kFp4) {
        Mxf4Nvf4Panel<kFolded>(t, r0, panel, &c[0][0], bad);
      } else {
        Mxf8f6f4Panel(t, r0, panel, &c[0][0], bad, t.counts + 3 * unit);
      }
      for (std::int64_t r = 0; r < kLaneRows && r0 + r < m; ++r) {
        const std::int64_t row = r0 + r;
        // A whole vector of outputs with nothing to leave (the usual case): one store; left
        // stays 0 as the caller set it.
        if (full && !panel_special && t.a->special[row] == 0 &&
            hn::AllFalse(di, hn::Ne(bad[r], hn::Zero(di))) &&
            (t.c.empty() ||
             hn::AllTrue(df, hn::IsFinite(hn::LoadU(df, t.c.data() + row * n + col0))))) {
          hn::StoreU(hn::Load(df, c[r]), df, t.out.data() + row * n + col0);
          continue;
        }
        hn::Store(bad[r], di, bad_lanes);
        for (std::int64_t j = 0; j < l && col0 + j < n; ++j) {
          const std::int64_t col = col0 + j;
          const auto at = static_cast<std::size_t>(row * n + col);
          t.out[at] = c[r][j];
          const bool special = t.a->special[row] != 0 || t.b_special[col] != 0 ||
                               (!t.c.empty() && !std::isfinite(t.c[at]));
          t.left[at] = special || bad_lanes[j] != 0 ? 1 : 0;
          any_left = any_left || t.left[at] != 0;
        }
      }
    }
  }
  return any_left;
}

bool BlockScaledLanes(const BlockScaledOperand& a, const BlockScaledOperand& b,
                      BlockScaledPath path, std::span<const float> c, int threads,
                      std::span<float> out, std::span<std::uint8_t> left,
                      BlockScaledLaneSteps* steps) {
  const bool fp4 = path == BlockScaledPath::kMxf4Nvf4;
  const std::size_t lanes = hn::Lanes(DF());
  thread_local LaneScratch scratch;
  const LaneOperand& pa = scratch.a;
  const LaneOperand& pb = scratch.b;
  // A row-major with zero rows up to whole micro-tiles, B in panels of one vector's columns with
  // zero columns up to the last panel's end.
  const bool fold = fp4 && fold_scales(a, b);
  if (fp4) {
    decode_lanes<true>(a, 1, kLaneRows, fold, scratch.a, &Fp4RowLanes);
    decode_lanes<true>(b, lanes, static_cast<std::int64_t>(lanes), fold, scratch.b, &Fp4RowLanes);
  } else {
    decode_lanes<false>(a, 1, kLaneRows, false, scratch.a);
    decode_lanes<false>(b, lanes, static_cast<std::int64_t>(lanes), false, scratch.b);
  }
  const std::int64_t units = (a.outer + kLaneUnitRows - 1) / kLaneUnitRows;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(3 * units), 0);
  Mxf8Fills fills;
  fills.a = &scratch.a;
  fills.b = &scratch.b;
  const LaneArgs args{&pa,
                      b.outer,
                      pb.value.data(),
                      pb.exponent.data(),
                      pb.scaled.data(),
                      pb.scaled32.data(),
                      pb.step_spread32.data(),
                      pb.step_low.data(),
                      pb.step_spread.data(),
                      pb.panel_top.data(),
                      pb.pow_top.data(),
                      pb.pow_low.data(),
                      pb.nonzero.data(),
                      pb.scale_e.data(),
                      pb.special.data(),
                      c,
                      out,
                      left,
                      counts.data(),
                      &fills};
  std::vector<std::uint8_t> unit_left(static_cast<std::size_t>(units), 0);
  parallel_units(units, threads, [&](std::int64_t unit) HWY_ATTR {
    unit_left[unit] =
        fp4 ? (fold ? LaneUnit<true, true>(args, unit) : LaneUnit<true, false>(args, unit))
            : LaneUnit<false, false>(args, unit);
  });
  scratch.release_if_large();
  if (steps != nullptr) {
    for (std::int64_t u = 0; u < units; ++u) {
      steps->exact += counts[static_cast<std::size_t>(3 * u)];
      steps->general += counts[static_cast<std::size_t>(3 * u + 1)];
      steps->narrow += counts[static_cast<std::size_t>(3 * u + 2)];
    }
  }
  return std::any_of(unit_left.begin(), unit_left.end(), [](std::uint8_t x) { return x != 0; });
}

const char* BlockScaledTargetName() { return hwy::TargetName(HWY_TARGET); }

FP8LAB_GEMM_TILES_END;

#if HWY_ONCE
namespace fp8lab::sim {
namespace gemm_detail {
HWY_EXPORT(BlockScaledLanes);
HWY_EXPORT(BlockScaledTargetName);

bool block_scaled_lanes(const BlockScaledOperand& a, const BlockScaledOperand& b,
                        BlockScaledPath path, std::span<const float> c, int threads,
                        std::span<float> out, std::span<std::uint8_t> left,
                        BlockScaledLaneSteps* steps) {
  return HWY_DYNAMIC_DISPATCH(BlockScaledLanes)(a, b, path, c, threads, out, left, steps);
}

bool block_scaled_folds(const BlockScaledOperand& a, const BlockScaledOperand& b) {
  return fold_scales(a, b);
}
}  // namespace gemm_detail

const char* block_scaled_target_name() {
  return HWY_DYNAMIC_DISPATCH(gemm_detail::BlockScaledTargetName)();
}
}  // namespace fp8lab::sim
#endif
