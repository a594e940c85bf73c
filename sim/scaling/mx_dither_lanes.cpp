// mx_dither.hpp's 64-point RHT and 'dither_scale' quantizer in Highway lanes, with the bits of the
// scalar model (mx_dither.cpp's mx_rht_chunk_scalar and mx_dither_block_scalar, which take the
// edges these lanes leave).
//
// The RHT: output y_j = sum_i x_i s_i H[i][j] / 8 is, as in the model, an fp32 sum of 64 exact
// terms t_i = +-(bf16(x_i) s_i / 8) taken in index order i = 0..63, one dependent add after
// another, then rounded RN to bf16. The lanes change which outputs run at once, never the order
// of any output's sum, so every output is the same fp32 additions on the same values as the
// scalar model's: the same bits by construction (fp32 addition is commutative, and NaNs come out
// as bf16's one canonical NaN whatever their payload). Along the columns (kRowwise) the lanes are
// the outputs j of one chunk: term i is t_i broadcast with the signs of H[i][j] (a row of the
// sign table per lane, one constant sign per vector: RhtChunkAlongRow). Down the rows (kColumnwise) the lanes are adjacent columns, one
// chunk each: term i of output j is the vector t_i or -t_i, and 8 outputs are summed at once so
// that 8 independent chains of adds fill the adder.
//
// The quantizer: per block of 32 (lanes along the row for kRowwise, one vector of adjacent
// columns for kColumnwise), amax and the NaN/Inf test as integer maxima of |x|'s bits, the block's
// shared exponent and scales in scalar code (once per 32 elements), then per element the model's
// fp32 steps: a = RN(RN(3 x) * 2^-(se + 2)) (the model divides by 2^(se + 2): the same rounding
// of the same real number, 2^-(se + 2) >= 2^-127 being exact), f = floor(RN(|a| * 2^-pe * 2 + u))
// and u from PhiloxLanes (philox-inl.h) for the elements' row-major indices. The code of
// q = f / 2 * 2^pe (clamped to 6) is min(f + 2 pe, 7), plus 8 for a negative a: with |a| <= 6
// (mx_dither.hpp), pe <= 2 and f is in 0..4 at pe 0 (q = f / 2, code f) and 2..4 above
// (q = f * 2^(pe - 1): codes 4, 5, 6 at pe 1; 6, 7 and 7 at pe 2, where q = 8 is clamped to 6);
// an a that 3 x overflowed to Inf gives 7, the model's +-6.
#include "sim/scaling/mx_dither_lanes.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/scaling/mx_dither_lanes.cpp"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/philox-inl.h"

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::scaling::mx_dither_detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using fp8lab::sim::HWY_NAMESPACE::PhiloxLanes;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using DU = hn::RebindToUnsigned<DF>;
using DU8 = hn::Rebind<std::uint8_t, DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;
using VU = hn::Vec<DU>;

// Lanes of a whole vector on every target these files are built for (fixed-width x86 vectors
// and the scalar target); the kernels below run only when hn::Lanes(DF()) equals it.
constexpr std::size_t kLanes = hn::MaxLanes(DF());
constexpr int kBlock = 32;  // kMxBlockSize
static_assert(kMxRhtSize % kLanes == 0 && kBlock % (2 * kLanes) == 0);

constexpr std::int32_t kAbsMask = 0x7FFF'FFFF;
constexpr std::int32_t kInfBits = 0x7F80'0000;

// sim/cast.cpp's fp32_to_bf16 then back: the bits rounded to nearest even at bit 16 (unsigned
// adds: no overflow), any NaN to the canonical bf16 NaN 0x7FFF.
HWY_INLINE VF Bf16Round(VF v) {
  const DU du;
  const DI di;
  const VU bits = hn::BitCast(du, v);
  const VU odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const VU rounded =
      hn::And(hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), odd)), hn::Set(du, 0xFFFF'0000u));
  const auto nan =
      hn::Gt(hn::And(hn::BitCast(di, v), hn::Set(di, kAbsMask)), hn::Set(di, kInfBits));
  return hn::BitCast(DF(),
                     hn::IfThenElse(hn::RebindMask(du, nan), hn::Set(du, 0x7FFF'0000u), rounded));
}

// The terms' bases: bf16(x) with the draw's sign bit XORed in, times 1/8 (exact).
HWY_INLINE VF Base(VF x, VF sign_bit) {
  return hn::Mul(hn::Xor(Bf16Round(x), sign_bit), hn::Set(DF(), 0.125f));
}

// One chunk of 64 contiguous elements (kRowwise): lanes over the outputs j.
constexpr std::size_t kOutVectors = kMxRhtSize / kLanes;

// Outputs j = q L + l and terms i = h L + k (l, k < L lanes): i & j is (h L & q L) | (k & l), so
// H[i][j] = (-1)^popcount(h & q) (-1)^popcount(k & l): the second factor is lane l of row k of the
// sign table, the first a constant per vector q in the unrolled loops below.
template <std::size_t h, std::size_t... q>
HWY_INLINE void AddAlongRow(VF* sum, VF plus, VF minus, std::index_sequence<q...>) {
  ((sum[q] = hn::Add(sum[q], (std::popcount(h & q) & 1) != 0 ? minus : plus)), ...);
}

// The terms i = h L + k, k = 0..L-1, of one h in order.
template <std::size_t h>
HWY_INLINE void AddBlockAlongRow(VF* sum, const float* t) {
  const DF df;
  const DU du;
  for (std::size_t k = 0; k < kLanes; ++k) {
    const VF low = hn::BitCast(df, hn::LoadU(du, kHadamardSignBits.data() + k * kMxRhtSize));
    const VF plus = hn::Xor(hn::Set(df, t[h * kLanes + k]), low);
    AddAlongRow<h>(sum, plus, hn::Xor(plus, hn::Set(df, -0.0f)),
                   std::make_index_sequence<kOutVectors>());
  }
}

// The blocks h = 0, 1, ... in order (a fold over the comma operator runs left to right).
template <std::size_t... h>
HWY_INLINE void AddAllAlongRow(VF* sum, const float* t, std::index_sequence<h...>) {
  (AddBlockAlongRow<h>(sum, t), ...);
}

HWY_INLINE void RhtChunkAlongRow(const float* x, const float* in_signs, float* out) {
  const DF df;
  HWY_ALIGN float t[kMxRhtSize];
  for (std::size_t i = 0; i < kMxRhtSize; i += kLanes) {
    hn::Store(Base(hn::LoadU(df, x + i), hn::Load(df, in_signs + i)), df, t + i);
  }
  VF sum[kOutVectors];
  for (auto& s : sum) s = hn::Zero(df);
  if constexpr (kOutVectors <= 16) {
    AddAllAlongRow(sum, t, std::make_index_sequence<kOutVectors>());
  } else {  // the scalar target: the table for every sign
    const DU du;
    const std::uint32_t* signs = kHadamardSignBits.data();
    for (std::size_t i = 0; i < kMxRhtSize; ++i) {
      const VF term = hn::Set(df, t[i]);
      for (std::size_t q = 0; q < kOutVectors; ++q) {
        const VF sign = hn::BitCast(df, hn::LoadU(du, signs + i * kMxRhtSize + q * kLanes));
        sum[q] = hn::Add(sum[q], hn::Xor(term, sign));  // sum_j += t_i H[i][j], in order of i
      }
    }
  }
  for (std::size_t q = 0; q < kOutVectors; ++q) {
    hn::StoreU(Bf16Round(sum[q]), df, out + q * kLanes);
  }
}

// Outputs j = j0 + c and terms i = i0 + l (c, l < 8; i0, j0 multiples of 8): i & j is
// (i0 & j0) | (l & c), so H[i][j] = (-1)^popcount(i0 & j0) (-1)^popcount(l & c), the second
// factor a constant in the unrolled loops below.
constexpr std::size_t kChains = 8;

// sum_c += H[i0 + l][j0 + c] t_{i0 + l} for c < 8: plus[l] = +-t_{i0 + l} by the first factor,
// minus[l] its negation.
template <std::size_t l, std::size_t... c>
HWY_INLINE void AddTerm(VF* sum, const VF* plus, const VF* minus, std::index_sequence<c...>) {
  ((sum[c] = hn::Add(sum[c], (std::popcount(l & c) & 1) != 0 ? minus[l] : plus[l])), ...);
}

// The terms l = 0..7 in order (a fold over the comma operator runs left to right).
template <std::size_t... l>
HWY_INLINE void AddTerms(VF* sum, const VF* plus, const VF* minus, std::index_sequence<l...>) {
  (AddTerm<l>(sum, plus, minus, std::make_index_sequence<kChains>()), ...);
}

// The chunks of kLanes adjacent columns o.. over rows t0..t0+63 (kColumnwise): lanes over
// columns, 8 outputs at a time. next: the next group's first element (prefetched: its rows
// are 64 strided lines), or null.
HWY_INLINE void RhtChunksDownColumns(const float* x, std::int64_t cols, const float* in_signs,
                                     float* out, const float* next) {
  const DF df;
  const VF sign_bit = hn::Set(df, -0.0f);
  VF t[2][kMxRhtSize];  // t[0][i] = t_i, t[1][i] = -t_i
  for (std::size_t i = 0; i < kMxRhtSize; ++i) {
    const auto row = static_cast<std::int64_t>(i) * cols;
    const VF base = Base(hn::LoadU(df, x + row), hn::Set(df, in_signs[i]));
    if (next != nullptr) hwy::Prefetch(next + row);
    t[0][i] = base;
    t[1][i] = hn::Xor(base, sign_bit);
  }
  for (std::size_t j0 = 0; j0 < kMxRhtSize; j0 += kChains) {
    VF sum[kChains];
    for (auto& s : sum) s = hn::Zero(df);
    for (std::size_t i0 = 0; i0 < kMxRhtSize; i0 += kChains) {  // in order of i = i0 + l
      const auto flip = static_cast<std::size_t>(std::popcount(i0 & j0) & 1);
      AddTerms(sum, t[flip] + i0, t[flip ^ 1] + i0, std::make_index_sequence<kChains>());
    }
    for (std::size_t c = 0; c < kChains; ++c) {
      hn::StoreU(Bf16Round(sum[c]), df, out + static_cast<std::int64_t>(j0 + c) * cols);
    }
  }
}

void MxRhtLanes(const float* x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                std::uint64_t sign_mask, float* out) {
  HWY_ALIGN float in_signs[kMxRhtSize];
  for (int i = 0; i < kMxRhtSize; ++i) in_signs[i] = ((sign_mask >> i) & 1u) != 0 ? -0.0f : 0.0f;
  const bool whole_vectors = hn::Lanes(DF()) == kLanes;
  if (axis == ScaleAxis::kRowwise) {
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t t0 = 0; t0 < cols; t0 += kMxRhtSize) {
        if (whole_vectors) {
          RhtChunkAlongRow(x + r * cols + t0, in_signs, out + r * cols + t0);
        } else {
          mx_rht_chunk_scalar(x, cols, axis, sign_mask, r, t0, out);
        }
      }
    }
    return;
  }
  const auto lanes = static_cast<std::int64_t>(kLanes);
  for (std::int64_t t0 = 0; t0 < rows; t0 += kMxRhtSize) {
    std::int64_t o = 0;
    for (; whole_vectors && o + lanes <= cols; o += lanes) {
      const float* next = o + 2 * lanes <= cols ? x + t0 * cols + o + lanes : nullptr;
      RhtChunksDownColumns(x + t0 * cols + o, cols, in_signs, out + t0 * cols + o, next);
    }
    for (; o < cols; ++o) mx_rht_chunk_scalar(x, cols, axis, sign_mask, o, t0, out);
  }
}

// ---- the quantizer ------------------------------------------------------------------------

// |x|'s bits (a NaN's above Inf's).
HWY_INLINE VI AbsBits(VF x) { return hn::And(hn::BitCast(DI(), x), hn::Set(DI(), kAbsMask)); }

// |x|'s bits with NaN lanes 0: their maximum is the NaN-ignoring amax.
HWY_INLINE VI NonNanAbsBits(VI abs) {
  return hn::IfThenElseZero(hn::Lt(abs, hn::Set(DI(), kInfBits + 1)), abs);
}

// The codes of one vector of a block's elements: recip = 2^-(se + 2), word their Philox words.
HWY_INLINE VI Codes(VF x, VF recip, VU word) {
  const DF df;
  const DI di;
  const VF u = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, hn::And(word, hn::Set(DU(), 0xFF'FFFFu)))),
                       hn::Set(df, 0x1p-24f));
  const VF a = hn::Mul(hn::Mul(x, hn::Set(df, 3.0f)), recip);
  const VF magnitude = hn::Abs(a);
  // pe = max(floor(log2 |a|), 0) from the exponent field (0 for 0 and subnormals), at most 3 here
  // (2 for every finite a; 3 for Inf, which gives code 7 whatever f is).
  const VI exponent = hn::Sub(hn::ShiftRight<23>(hn::BitCast(di, magnitude)), hn::Set(di, 127));
  const VI pe = hn::Min(hn::Max(exponent, hn::Zero(di)), hn::Set(di, 3));
  const VF inv_pow2 = hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(hn::Set(di, 127), pe)));
  const VF scaled = hn::Mul(hn::Mul(magnitude, inv_pow2), hn::Set(df, 2.0f));  // exact
  const VF f = hn::Floor(hn::Add(scaled, u));
  const VF code = hn::Min(hn::Add(f, hn::ConvertTo(df, hn::ShiftLeft<1>(pe))), hn::Set(df, 7.0f));
  const auto negative = hn::RebindMask(di, hn::Lt(a, hn::Zero(df)));
  return hn::Or(hn::ConvertTo(di, code), hn::IfThenElseZero(negative, hn::Set(di, 8)));
}

// Stores the codes of lanes outside `skip` (0 in them) and counts the underflowed ones.
template <class Mask>
HWY_INLINE void StoreCodes(VF x, VI code, Mask skip, std::uint8_t* codes,
                           std::uint64_t& underflowed) {
  const DI di;
  code = hn::IfThenZeroElse(skip, code);
  const auto zero_code = hn::Eq(hn::And(code, hn::Set(di, 7)), hn::Zero(di));
  const auto nonzero_x = hn::RebindMask(di, hn::Ne(x, hn::Zero(DF())));
  underflowed += hn::CountTrue(di, hn::AndNot(skip, hn::And(nonzero_x, zero_code)));
  hn::StoreU(hn::DemoteTo(DU8(), code), DU8(), codes);
}

// The blocks of one row (kRowwise): whole blocks in lanes, a partial last block scalar.
void DitherRow(const float* x, std::int64_t cols, std::int64_t r, PhiloxLanes& philox,
               VI& tensor_max, std::uint64_t seed, std::uint64_t stream, DitherOutput& out) {
  const DF df;
  const DI di;
  constexpr std::size_t kVectors = kBlock / kLanes;
  const float* row = x + r * cols;
  std::int64_t c0 = 0;
  for (; c0 + kBlock <= cols; c0 += kBlock) {
    VF xs[kVectors];
    VI block_max = hn::Zero(di);
    for (std::size_t q = 0; q < kVectors; ++q) {
      xs[q] = hn::LoadU(df, row + c0 + q * kLanes);
      const VI abs = AbsBits(xs[q]);
      block_max = hn::Max(block_max, abs);
      tensor_max = hn::Max(tensor_max, NonNanAbsBits(abs));
    }
    const auto b = static_cast<std::size_t>(r * out.scale_cols + c0 / kBlock);
    const std::int32_t max_bits = hn::GetLane(hn::MaxOfLanes(di, block_max));
    if (max_bits >= kInfBits) {
      mx_dither_set_special(b, out);  // codes stay 0
      continue;
    }
    const int se = mx_dither_shared_exponent(std::bit_cast<float>(max_bits));
    mx_dither_set_scales(se, b, out);
    const VF recip = hn::Set(df, std::ldexp(1.0f, -(se + 2)));
    const auto none = hn::FirstN(di, 0);
    for (std::size_t q = 0; q < kVectors; q += 2) {
      const std::int64_t first = r * cols + c0 + static_cast<std::int64_t>(q * kLanes);
      VU words[2];
      philox.Words(static_cast<std::uint64_t>(first), words);
      for (std::size_t h = 0; h < 2; ++h) {
        StoreCodes(xs[q + h], Codes(xs[q + h], recip, words[h]), none,
                   out.codes + first + static_cast<std::int64_t>(h * kLanes), out.underflowed);
      }
    }
  }
  if (c0 < cols) {
    const auto b = static_cast<std::size_t>(r * out.scale_cols + c0 / kBlock);
    mx_dither_block_scalar(x, cols, r, r + 1, c0, cols, b, seed, stream, out);
  }
}

// The blocks [r0, r1) x [o, o + kGroup * kLanes) (kColumnwise): one block per lane.
template <int kGroup>
void DitherColumns(const float* x, std::int64_t cols, std::int64_t r0, std::int64_t r1,
                   std::int64_t o, std::size_t b0, PhiloxLanes& philox, VI& tensor_max,
                   DitherOutput& out) {
  const DF df;
  const DI di;
  VI block_max[kGroup];
  for (auto& m : block_max) m = hn::Zero(di);
  for (std::int64_t r = r0; r < r1; ++r) {
    for (int h = 0; h < kGroup; ++h) {
      const VI abs = AbsBits(hn::LoadU(df, x + r * cols + o + h * static_cast<int>(kLanes)));
      block_max[h] = hn::Max(block_max[h], abs);
      tensor_max = hn::Max(tensor_max, NonNanAbsBits(abs));
    }
  }
  HWY_ALIGN std::int32_t max_bits[kGroup * kLanes];
  HWY_ALIGN float recips[kGroup * kLanes];
  for (int h = 0; h < kGroup; ++h) hn::Store(block_max[h], di, max_bits + h * kLanes);
  for (std::size_t l = 0; l < kGroup * kLanes; ++l) {
    if (max_bits[l] >= kInfBits) {
      mx_dither_set_special(b0 + l, out);
      recips[l] = 1.0f;  // its codes are masked to 0 (below)
      continue;
    }
    const int se = mx_dither_shared_exponent(std::bit_cast<float>(max_bits[l]));
    mx_dither_set_scales(se, b0 + l, out);
    recips[l] = std::ldexp(1.0f, -(se + 2));
  }
  for (std::int64_t r = r0; r < r1; ++r) {
    VU words[kGroup];
    philox.Words(static_cast<std::uint64_t>(r * cols + o), words);
    for (int h = 0; h < kGroup; ++h) {
      const auto at = static_cast<std::size_t>(h) * kLanes;
      const VF xv = hn::LoadU(df, x + r * cols + o + static_cast<std::int64_t>(at));
      const auto special = hn::Gt(block_max[h], hn::Set(di, kInfBits - 1));
      // A special lane's code is masked to 0; its x is replaced by 0 so that no NaN reaches
      // the conversion to int.
      const VF finite = hn::IfThenZeroElse(hn::RebindMask(df, special), xv);
      StoreCodes(xv, Codes(finite, hn::Load(df, recips + at), words[h]), special,
                 out.codes + r * cols + o + static_cast<std::int64_t>(at), out.underflowed);
    }
  }
}

void MxDitherLanes(const float* x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                   std::uint64_t seed, std::uint64_t stream, DitherOutput& out) {
  const DI di;
  PhiloxLanes philox(seed, stream);
  VI tensor_max = hn::Zero(di);
  const bool whole_vectors = hn::Lanes(DF()) == kLanes;
  if (axis == ScaleAxis::kRowwise) {
    for (std::int64_t r = 0; r < rows; ++r) {
      if (whole_vectors) {
        DitherRow(x, cols, r, philox, tensor_max, seed, stream, out);
        continue;
      }
      for (std::int64_t c0 = 0; c0 < cols; c0 += kBlock) {
        mx_dither_block_scalar(x, cols, r, r + 1, c0, std::min(cols, c0 + kBlock),
                               static_cast<std::size_t>(r * out.scale_cols + c0 / kBlock), seed,
                               stream, out);
      }
    }
  } else {
    const auto lanes = static_cast<std::int64_t>(kLanes);
    for (std::int64_t r0 = 0; r0 < rows; r0 += kBlock) {
      const std::int64_t r1 = std::min(rows, r0 + kBlock);
      const auto row_blocks = static_cast<std::size_t>((r0 / kBlock) * cols);
      std::int64_t o = 0;
      for (; whole_vectors && o + 2 * lanes <= cols; o += 2 * lanes) {
        DitherColumns<2>(x, cols, r0, r1, o, row_blocks + static_cast<std::size_t>(o), philox,
                         tensor_max, out);
      }
      for (; whole_vectors && o + lanes <= cols; o += lanes) {
        DitherColumns<1>(x, cols, r0, r1, o, row_blocks + static_cast<std::size_t>(o), philox,
                         tensor_max, out);
      }
      for (; o < cols; ++o) {
        mx_dither_block_scalar(x, cols, r0, r1, o, o + 1, row_blocks + static_cast<std::size_t>(o),
                               seed, stream, out);
      }
    }
  }
  const float lanes_amax = std::bit_cast<float>(hn::GetLane(hn::MaxOfLanes(di, tensor_max)));
  out.amax = std::max(out.amax, lanes_amax);
}

const char* MxDitherTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::scaling::mx_dither_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim::scaling {
namespace mx_dither_detail {
HWY_EXPORT(MxRhtLanes);
HWY_EXPORT(MxDitherLanes);
HWY_EXPORT(MxDitherTargetName);

void mx_rht_lanes(const float* x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                  std::uint64_t sign_mask, float* out) {
  HWY_DYNAMIC_DISPATCH(MxRhtLanes)(x, rows, cols, axis, sign_mask, out);
}

void mx_dither_lanes(const float* x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                     std::uint64_t seed, std::uint64_t stream, DitherOutput& out) {
  HWY_DYNAMIC_DISPATCH(MxDitherLanes)(x, rows, cols, axis, seed, stream, out);
}
}  // namespace mx_dither_detail

const char* mx_dither_target_name() {
  return HWY_DYNAMIC_DISPATCH(mx_dither_detail::MxDitherTargetName)();
}
}  // namespace fp8lab::sim::scaling
#endif
