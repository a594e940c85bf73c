// stats_lanes.hpp's walk in Highway lanes, with the bits of adding the elements one by one.
//
// Row by row (element order), a row in chunks of kChunk elements: first each element's terms in
// float64 lanes, one lane per element, stored to one small array per sum; then the sums take their
// chunk's terms in element order, each one dependent add after another, the six chains interleaved
// in one loop so that their latencies overlap. The terms are the scalar model's operations on the
// same values (x̂ = RN(decode(q) * scale_inv) in fp32, then x, x̂ widened exactly to float64,
// error = x - x̂, x², error², x² x and x² x², in that order of operands), so every sum is the same
// float64 additions as adding element after element. An element a sum leaves out (a non-finite x
// or x̂) adds +0.0 instead: the sums start at +0.0 and a float64 sum is -0.0 only when both its
// operands are, so none is ever -0.0 and adding +0.0 leaves it unchanged. The counts, and each
// block's largest and smallest finite nonzero |x| (a maximum and a minimum), do not depend on order.
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
constexpr std::size_t kChunk = 256;  // elements whose terms are computed before they are added
static_assert(kChunk % kMaxLanes == 0);

// A chunk's terms, one array per sum, element k at index k.
struct Terms {
  alignas(64) double signal[kChunk];
  alignas(64) double noise[kChunk];
  alignas(64) double s1[kChunk];
  alignas(64) double s2[kChunk];
  alignas(64) double s3[kChunk];
  alignas(64) double s4[kChunk];
};

// The terms of the hn::Lanes(DD()) elements at x (codes at q, their blocks' scale_inv at s) into
// index k of t, and the counts of the lanes `valid` holds.
template <unsigned kM>
HWY_INLINE void VectorTerms(const float* x, const std::uint8_t* q, const float* s,
                            const float* decode, MD valid, std::size_t k, Terms& t,
                            QuantizationSums& sums) {
  const DD dd;
  const DFH dfh;
  const VD v = hn::PromoteTo(dd, hn::LoadU(dfh, x));
  if constexpr ((kM & kSqnr) != 0) {
    const auto index = hn::PromoteTo(DIH(), hn::LoadU(DU8H(), q));
    const VD xhat =
        hn::PromoteTo(dd, hn::Mul(hn::GatherIndex(dfh, decode, index), hn::LoadU(dfh, s)));
    const MD both = hn::And(hn::IsFinite(v), hn::IsFinite(xhat));
    const VD error = hn::Sub(v, xhat);
    hn::Store(hn::IfThenElseZero(both, hn::Mul(v, v)), dd, t.signal + k);
    hn::Store(hn::IfThenElseZero(both, hn::Mul(error, error)), dd, t.noise + k);
    sums.sqnr.elements += hn::CountTrue(dd, hn::And(both, valid));
  }
  if constexpr ((kM & kMoments) != 0) {
    const MD finite = hn::IsFinite(v);
    const VD v2 = hn::Mul(v, v);
    hn::Store(hn::IfThenElseZero(finite, v), dd, t.s1 + k);
    hn::Store(hn::IfThenElseZero(finite, v2), dd, t.s2 + k);
    hn::Store(hn::IfThenElseZero(finite, hn::Mul(v2, v)), dd, t.s3 + k);
    hn::Store(hn::IfThenElseZero(finite, hn::Mul(v2, v2)), dd, t.s4 + k);
    sums.moments.elements += hn::CountTrue(dd, hn::And(finite, valid));
  }
}

// The chunk's first n terms into the sums, in element order (six independent chains).
template <unsigned kM>
HWY_INLINE void AddInOrder(const Terms& t, std::size_t n, QuantizationSums& sums) {
  double signal = sums.sqnr.signal, noise = sums.sqnr.noise;
  double s1 = sums.moments.s1, s2 = sums.moments.s2, s3 = sums.moments.s3, s4 = sums.moments.s4;
  for (std::size_t k = 0; k < n; ++k) {
    if constexpr ((kM & kSqnr) != 0) {
      signal += t.signal[k];
      noise += t.noise[k];
    }
    if constexpr ((kM & kMoments) != 0) {
      s1 += t.s1[k];
      s2 += t.s2[k];
      s3 += t.s3[k];
      s4 += t.s4[k];
    }
  }
  sums.sqnr.signal = signal;
  sums.sqnr.noise = noise;
  sums.moments.s1 = s1;
  sums.moments.s2 = s2;
  sums.moments.s3 = s3;
  sums.moments.s4 = s4;
}

// The n elements of a row starting at x (codes q, scale_inv s per element) into the sums.
template <unsigned kM>
void AddRow(const float* x, const std::uint8_t* q, const float* s, const float* decode,
            std::size_t n, Terms& t, QuantizationSums& sums) {
  const DD dd;
  const std::size_t lanes = hn::Lanes(dd);
  for (std::size_t c0 = 0; c0 < n; c0 += kChunk) {
    const std::size_t m = std::min(kChunk, n - c0);
    std::size_t k = 0;
    for (; k + lanes <= m; k += lanes) {
      VectorTerms<kM>(x + c0 + k, q == nullptr ? nullptr : q + c0 + k,
                      s == nullptr ? nullptr : s + c0 + k, decode, hn::FirstN(dd, lanes), k, t,
                      sums);
    }
    if (k < m) {  // the last few elements, padded with x = 0, code 0, scale 1 (not counted)
      const std::size_t rest = m - k;
      HWY_ALIGN float x_pad[kMaxLanes] = {};
      HWY_ALIGN std::uint8_t q_pad[kMaxLanes] = {};
      HWY_ALIGN float s_pad[kMaxLanes];
      std::fill(s_pad, s_pad + kMaxLanes, 1.0f);
      std::memcpy(x_pad, x + c0 + k, rest * sizeof(float));
      if constexpr ((kM & kSqnr) != 0) {
        std::memcpy(q_pad, q + c0 + k, rest);
        std::memcpy(s_pad, s + c0 + k, rest * sizeof(float));
      }
      VectorTerms<kM>(x_pad, q_pad, s_pad, decode, hn::FirstN(dd, rest), k, t, sums);
    }
    AddInOrder<kM>(t, m, sums);
  }
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
  Terms terms;
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
      AddRow<kM>(x_row, q_row, scale, in.decode, cols, terms, sums);
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
