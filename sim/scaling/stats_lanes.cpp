// stats_lanes.hpp's walk in Highway lanes, with the bits of adding the elements one by one.
//
// Row by row (element order), a row in chunks of kChunk (32) elements: first each element's
// terms in float64 lanes, one lane per element, stored as three pairs, (x², error²), (x, x²) and
// (x³, x⁴), each pair's two terms side by side; then the chunk's pairs are added in element order,
// each pair with one 128-bit add into the two sums it holds (two independent float64 adds), the
// three chains interleaved so that their latencies overlap, and the next chunk's term lanes with
// them. The terms are the scalar model's operations on the same values (x̂ = RN(decode(q) *
// scale_inv) in fp32, then x, x̂ widened exactly to float64, error = x - x̂, x², error², x² x and
// x² x², in that order of operands), so every sum is the same float64 additions as adding element
// after element. An element a sum leaves out (a non-finite x or x̂) adds +0.0 instead: the sums
// start at +0.0 and a float64 sum is -0.0 only when both its operands are, so none is ever -0.0
// and adding +0.0 leaves it unchanged. The counts, and each block's largest and smallest finite
// nonzero |x| (a maximum and a minimum), do not depend on order. On the scalar target (one lane)
// the pairs are two plain float64 sums.
#include "sim/scaling/stats_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/scaling/stats_lanes.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::scaling::stats_detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::ScalableTag<double>;
using DFH = hn::Rebind<float, DD>;  // fp32 lanes, one per float64 lane
using DIH = hn::Rebind<std::int32_t, DD>;
using DU8H = hn::Rebind<std::uint8_t, DD>;
using DF = hn::ScalableTag<float>;  // the block range's lanes
using VD = hn::Vec<DD>;
using VF = hn::Vec<DF>;
using MD = hn::Mask<DD>;

constexpr std::size_t kMaxLanes = hn::MaxLanes(DD());

// The six sums as three pairs, (signal, noise), (s1, s2) and (s3, s4): each pair's two sums in
// the two lanes of one 128-bit vector, so that one add takes an element's terms into both (the
// lanes' adds are independent float64 adds: each lane is its own sum in element order).
#if HWY_TARGET == HWY_SCALAR
struct PairSum {
  double first = 0.0, second = 0.0;
  HWY_INLINE void Add(const double* terms) {
    first += terms[0];
    second += terms[1];
  }
};
#else
struct PairSum {
  PairSum() : sum(hn::Zero(hn::Full128<double>())) {}
  hn::Vec<hn::Full128<double> > sum;
  double first = 0.0, second = 0.0;  // set by Finish
  HWY_INLINE void Add(const double* terms) {
    sum = hn::Add(sum, hn::Load(hn::Full128<double>(), terms));
  }
};
#endif

HWY_INLINE void Finish(PairSum& pair) {
#if HWY_TARGET != HWY_SCALAR
  HWY_ALIGN double lanes[2];
  hn::Store(pair.sum, hn::Full128<double>(), lanes);
  pair.first = lanes[0];
  pair.second = lanes[1];
#else
  (void)pair;
#endif
}

struct Sums {
  PairSum energy, low, high;  // (signal, noise), (s1, s2), (s3, s4)
};

// Where element e of a vector of terms finds its pair in the buffer PairTerms writes: the even
// elements' pairs first, then the odd ones' (InterleaveLower and InterleaveUpper interleave within
// each 128-bit block).
HWY_INLINE std::size_t PairAt(std::size_t e) { return (e & 1) * kMaxLanes + 2 * (e >> 1); }

// The pairs (a_e, b_e) of the lanes of a and b into `out` (2 kMaxLanes doubles), pair e at
// PairAt(e).
HWY_INLINE void PairTerms(VD a, VD b, double* out) {
#if HWY_TARGET == HWY_SCALAR
  out[0] = hn::GetLane(a);
  out[1] = hn::GetLane(b);
#else
  const DD dd;
  hn::Store(hn::InterleaveLower(dd, a, b), dd, out);
  hn::Store(hn::InterleaveUpper(dd, a, b), dd, out + kMaxLanes);
#endif
}

// Elements whose terms are computed before they are added: few enough that the out-of-order core
// overlaps one chunk's term lanes with the previous chunk's chains of adds.
constexpr std::size_t kChunk = 32;
static_assert(kChunk % kMaxLanes == 0);

// A chunk's term pairs, vector g's pairs from 2 g kMaxLanes on (PairTerms).
struct ChunkTerms {
  HWY_ALIGN double energy[2 * kChunk];
  HWY_ALIGN double low[2 * kChunk];
  HWY_ALIGN double high[2 * kChunk];
};

// The terms of the hn::Lanes(DD()) elements at x (codes at q, their blocks' scale_inv at s) into
// t at `at`; the counts of the first n.
template <unsigned kM>
HWY_INLINE void VectorTerms(const float* x, const std::uint8_t* q, const float* s,
                            const float* decode, std::size_t n, ChunkTerms& t, std::size_t at,
                            QuantizationSums& counts) {
  const DD dd;
  const DFH dfh;
  const MD valid = hn::FirstN(dd, n);
  const VD v = hn::PromoteTo(dd, hn::LoadU(dfh, x));
  if constexpr ((kM & kSqnr) != 0) {
    const auto index = hn::PromoteTo(DIH(), hn::LoadU(DU8H(), q));
    const VD xhat =
        hn::PromoteTo(dd, hn::Mul(hn::GatherIndex(dfh, decode, index), hn::LoadU(dfh, s)));
    const MD both = hn::And(hn::IsFinite(v), hn::IsFinite(xhat));
    const VD error = hn::Sub(v, xhat);
    PairTerms(hn::IfThenElseZero(both, hn::Mul(v, v)),
              hn::IfThenElseZero(both, hn::Mul(error, error)), t.energy + at);
    counts.sqnr.elements += hn::CountTrue(dd, hn::And(both, valid));
  }
  if constexpr ((kM & kMoments) != 0) {
    const MD finite = hn::IsFinite(v);
    const VD v2 = hn::Mul(v, v);
    PairTerms(hn::IfThenElseZero(finite, v), hn::IfThenElseZero(finite, v2), t.low + at);
    PairTerms(hn::IfThenElseZero(finite, hn::Mul(v2, v)),
              hn::IfThenElseZero(finite, hn::Mul(v2, v2)), t.high + at);
    counts.moments.elements += hn::CountTrue(dd, hn::And(finite, valid));
  }
}

// The chunk's first m elements' terms into the sums, in element order.
template <unsigned kM>
HWY_INLINE void AddInOrder(const ChunkTerms& t, std::size_t m, Sums& sums) {
  // The terms go through memory: the adds below read them as 128-bit operands (the compiler
  // would otherwise extract them from the term vectors, one shuffle each).
  asm volatile("" ::: "memory");
  for (std::size_t g = 0; g * kMaxLanes < m; ++g) {
    const std::size_t in_vector = std::min(kMaxLanes, m - g * kMaxLanes);
    for (std::size_t e = 0; e < in_vector; ++e) {  // in element order
      const std::size_t at = 2 * g * kMaxLanes + PairAt(e);
      if constexpr ((kM & kSqnr) != 0) sums.energy.Add(t.energy + at);
      if constexpr ((kM & kMoments) != 0) {
        sums.low.Add(t.low + at);
        sums.high.Add(t.high + at);
      }
    }
  }
}

// The n elements of a row starting at x (codes q, scale_inv s per element) into the sums.
template <unsigned kM>
void AddRow(const float* x, const std::uint8_t* q, const float* s, const float* decode,
            std::size_t n, Sums& row_sums, QuantizationSums& row_counts) {
  Sums sums = row_sums;  // locals for the row, so that the sums stay in registers
  QuantizationSums counts;
  ChunkTerms t;
  const std::size_t lanes = hn::Lanes(DD());
  for (std::size_t c0 = 0; c0 < n; c0 += kChunk) {
    const std::size_t m = std::min(kChunk, n - c0);
    std::size_t k = 0;
    for (; k + lanes <= m; k += lanes) {
      const std::size_t c = c0 + k;
      VectorTerms<kM>(x + c, q == nullptr ? nullptr : q + c, s == nullptr ? nullptr : s + c, decode,
                      lanes, t, 2 * k, counts);
    }
    if (k < m) {  // the row's last few elements, padded with x = 0, code 0, scale 1 (not counted)
      const std::size_t rest = m - k;
      const std::size_t c = c0 + k;
      HWY_ALIGN float x_pad[kMaxLanes] = {};
      HWY_ALIGN std::uint8_t q_pad[kMaxLanes] = {};
      HWY_ALIGN float s_pad[kMaxLanes];
      std::fill(s_pad, s_pad + kMaxLanes, 1.0f);
      std::memcpy(x_pad, x + c, rest * sizeof(float));
      if constexpr ((kM & kSqnr) != 0) {
        std::memcpy(q_pad, q + c, rest);
        std::memcpy(s_pad, s + c, rest * sizeof(float));
      }
      VectorTerms<kM>(x_pad, q_pad, s_pad, decode, rest, t, 2 * k, counts);
    }
    AddInOrder<kM>(t, m, sums);
  }
  row_sums = sums;
  row_counts.sqnr.elements += counts.sqnr.elements;
  row_counts.moments.elements += counts.moments.elements;
}

// One element of the block range (the scalar form of the lanes below).
HWY_INLINE void RangeElement(float value, float& largest, float& smallest) {
  const float magnitude = std::fabs(value);
  if (std::isfinite(magnitude) && magnitude != 0.0f) {
    largest = std::max(largest, magnitude);
    smallest = std::min(smallest, magnitude);
  }
}

// |x| where x is finite and nonzero, else `otherwise`.
HWY_INLINE VF MagnitudeOr(VF v, VF otherwise) {
  const DF df;
  const auto valid = hn::And(hn::IsFinite(v), hn::Ne(v, hn::Zero(df)));
  return hn::IfThenElse(valid, hn::Abs(v), otherwise);
}

// The row's elements into its blocks' running largest and smallest |x| (block b at index b).
void RowRange(const float* x, std::size_t cols, std::size_t block_cols, float* largest,
              float* smallest) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  const VF zero = hn::Zero(df);
  const VF inf = hn::Set(df, std::numeric_limits<float>::infinity());
  if (block_cols == 1) {  // a block per column: lanes over the blocks
    std::size_t c = 0;
    for (; c + lanes <= cols; c += lanes) {
      const VF v = hn::LoadU(df, x + c);
      hn::StoreU(hn::Max(hn::LoadU(df, largest + c), MagnitudeOr(v, zero)), df, largest + c);
      hn::StoreU(hn::Min(hn::LoadU(df, smallest + c), MagnitudeOr(v, inf)), df, smallest + c);
    }
    for (; c < cols; ++c) RangeElement(x[c], largest[c], smallest[c]);
    return;
  }
  for (std::size_t c0 = 0, b = 0; c0 < cols; c0 += block_cols, ++b) {
    const std::size_t c1 = std::min(cols, c0 + block_cols);
    std::size_t c = c0;
    if (c1 - c0 >= lanes) {
      VF most = zero, least = inf;
      for (; c + lanes <= c1; c += lanes) {
        const VF v = hn::LoadU(df, x + c);
        most = hn::Max(most, MagnitudeOr(v, zero));
        least = hn::Min(least, MagnitudeOr(v, inf));
      }
      largest[b] = std::max(largest[b], hn::GetLane(hn::MaxOfLanes(df, most)));
      smallest[b] = std::min(smallest[b], hn::GetLane(hn::MinOfLanes(df, least)));
    }
    for (; c < c1; ++c) RangeElement(x[c], largest[b], smallest[b]);
  }
}

template <unsigned kM>
QuantizationSums Walk(const WalkInput& in) {
  const auto cols = static_cast<std::size_t>(in.cols);
  const auto scale_cols = static_cast<std::size_t>(in.scale_cols);
  const auto block_cols = static_cast<std::size_t>(in.block_cols);
  std::vector<float> row_scale;  // kSqnr: the current block row's scale_inv per column
  if constexpr ((kM & kSqnr) != 0) {
    if (block_cols != 1) row_scale.resize(cols);
  }
  std::vector<float> largest, smallest;  // kRange: per block of the current block row
  if constexpr ((kM & kRange) != 0) {
    largest.assign(scale_cols, 0.0f);
    smallest.assign(scale_cols, std::numeric_limits<float>::infinity());
  }
  Sums pairs;
  QuantizationSums sums;
  const float* scale = nullptr;
  for (std::int64_t r = 0; r < in.rows; ++r) {
    const float* x_row = in.x + r * in.cols;
    if constexpr ((kM & (kSqnr | kMoments)) != 0) {
      const std::uint8_t* q_row = nullptr;
      if constexpr ((kM & kSqnr) != 0) {
        q_row = in.codes + r * in.cols;
        if (r % in.block_rows == 0) {  // a new block row
          const float* scale_row = in.scale_inv + (r / in.block_rows) * in.scale_cols;
          if (block_cols == 1) {
            scale = scale_row;
          } else {
            for (std::size_t b = 0; b < scale_cols; ++b) {
              const std::size_t c0 = b * block_cols;
              std::fill(
                  row_scale.begin() + static_cast<std::ptrdiff_t>(c0),
                  row_scale.begin() + static_cast<std::ptrdiff_t>(std::min(cols, c0 + block_cols)),
                  scale_row[b]);
            }
            scale = row_scale.data();
          }
        }
      }
      AddRow<kM>(x_row, q_row, scale, in.decode, cols, pairs, sums);
    }
    if constexpr ((kM & kRange) != 0) {
      RowRange(x_row, cols, block_cols, largest.data(), smallest.data());
      if ((r + 1) % in.block_rows != 0 && r + 1 != in.rows) continue;  // the block row goes on
      for (std::size_t b = 0; b < scale_cols; ++b) {
        if (largest[b] != 0.0f) {  // the block holds a finite nonzero input
          sums.max_block_dynamic_range_log2 = std::max(
              sums.max_block_dynamic_range_log2, std::log2(static_cast<double>(largest[b])) -
                                                     std::log2(static_cast<double>(smallest[b])));
        }
        largest[b] = 0.0f;
        smallest[b] = std::numeric_limits<float>::infinity();
      }
    }
  }
  Finish(pairs.energy);
  Finish(pairs.low);
  Finish(pairs.high);
  sums.sqnr.signal = pairs.energy.first;
  sums.sqnr.noise = pairs.energy.second;
  sums.moments.s1 = pairs.low.first;
  sums.moments.s2 = pairs.low.second;
  sums.moments.s3 = pairs.high.first;
  sums.moments.s4 = pairs.high.second;
  return sums;
}

QuantizationSums WalkLanes(unsigned measures, const WalkInput& in) {
  switch (measures) {
    case kSqnr: return Walk<kSqnr>(in);
    case kMoments: return Walk<kMoments>(in);
    case kRange: return Walk<kRange>(in);
    case kSqnr | kMoments | kRange: return Walk<kSqnr | kMoments | kRange>(in);
    default:
      throw std::logic_error("walk_lanes: measures " + std::to_string(measures) +
                             " is not kSqnr, kMoments, kRange or all three");
  }
}

const char* StatsTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::scaling::stats_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim::scaling::stats_detail {
HWY_EXPORT(WalkLanes);
HWY_EXPORT(StatsTargetName);

QuantizationSums walk_lanes(unsigned measures, const WalkInput& in) {
  return HWY_DYNAMIC_DISPATCH(WalkLanes)(measures, in);
}

const char* stats_target_name() { return HWY_DYNAMIC_DISPATCH(StatsTargetName)(); }

}  // namespace fp8lab::sim::scaling::stats_detail
#endif
