// E2M1 stochastic rounding (fp4_stochastic.hpp) in Highway lanes, with the scalar rule's bits:
// PhiloxLanes (philox-inl.h) draws one Philox word per 4 elements, whose little-endian bytes are
// the 4 elements' random bytes in order, and the rule runs on fp32 lanes exactly as
// e2m1_stochastic_code does: u * step is exact (a multiple of 2^-9), the add rounds as the scalar
// add, and floor(t / step) * step keeps t's exponent and first fraction bit (Codes).
#include "sim/fp4_stochastic_lanes.hpp"

#include <cstdint>

#include "sim/fp4_stochastic.hpp"
#include "sim/prefetch.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/fp4_stochastic_lanes.cpp"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/lane_types-inl.h"
#include "sim/philox-inl.h"

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::fp4_detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using fp8lab::sim::HWY_NAMESPACE::PhiloxLanes;

using namespace fp8lab::sim::HWY_NAMESPACE::lane_types;

// The E2M1 step at magnitude m: 0.5 below 2, 1 below 4, else 2 (fp4_stochastic.cpp's e2m1_step).
HWY_INLINE VF Step(VF m) {
  const DF df;
  return hn::IfThenElse(
      hn::Lt(m, hn::Set(df, 2.0f)), hn::Set(df, 0.5f),
      hn::IfThenElse(hn::Lt(m, hn::Set(df, 4.0f)), hn::Set(df, 1.0f), hn::Set(df, 2.0f)));
}

// The codes of one vector of x with its random bytes (e2m1_stochastic_code, lane by lane).
HWY_INLINE void Codes(const float* x, const std::uint8_t* random, std::uint8_t* codes) {
  const DF df;
  const DI di;
  const VF v = hn::LoadU(df, x);
  const VF magnitude = hn::Abs(v);
  const VF u = hn::Mul(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(DU8(), random))),
                       hn::Set(df, 1.0f / 256.0f));
  const VF t = hn::Add(magnitude, hn::Mul(u, Step(magnitude)));
  // floor(t / step(t)) * step(t): from 1 on, step(t) is half t's power of two, so the product
  // keeps t's exponent and first fraction bit (bits & 0xFFC00000); in [0.5, 1) it is 0.5 (no
  // fraction bit); below 0.5, 0. Then min(., 6), and 6 for |x| >= 6 (Inf, NaN: replaced below).
  const VI t_bits = hn::BitCast(di, t);
  const VI kept = hn::And(t_bits, hn::Set(di, static_cast<std::int32_t>(0xFFC00000u)));
  const VI q_bits = hn::Min(kept, hn::Set(di, 0x40C00000));  // 6.0; t >= 0, so bits order as t
  // The E2M1 code of q: from 1 on, exponent and fraction bit less the rebias (1.0 -> 2, 6 -> 7);
  // 0.5 -> 1, below -> 0.
  const VI normal_code = hn::Sub(hn::ShiftRight<22>(q_bits), hn::Set(di, 252));
  const VI small_code =
      hn::IfThenElseZero(hn::RebindMask(di, hn::Ge(t, hn::Set(df, 0.5f))), hn::Set(di, 1));
  VI c = hn::IfThenElse(hn::RebindMask(di, hn::Ge(t, hn::Set(df, 1.0f))), normal_code, small_code);
  c = hn::IfThenElse(hn::RebindMask(di, hn::Lt(magnitude, hn::Set(df, 6.0f))), c, hn::Set(di, 7));
  const auto sign = hn::ShiftRight<31>(hn::BitCast(di, v));  // -1 where the sign bit is set
  c = hn::Or(c, hn::And(sign, hn::Set(di, 8)));
  // NaN: +6, the saturating conversion's code.
  c = hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(v)), hn::Set(di, 0x7), c);
  hn::StoreU(hn::DemoteTo(DU8(), c), DU8(), codes);
}

void E2m1StochasticLanes(const float* x, std::size_t n, std::uint64_t seed, std::uint64_t stream,
                         std::uint64_t first_index, std::uint8_t* codes) {
  const std::size_t lanes = hn::Lanes(DF());
  const auto scalar = [&](std::size_t i) {
    codes[i] = e2m1_stochastic_code(x[i], e2m1_stochastic_byte(seed, stream, first_index + i));
  };
  std::size_t i = 0;
  // Up to the first element that starts a word.
  for (; i < n && (first_index + i) % 4 != 0; ++i) scalar(i);
  // Two vectors of Philox words per iteration: each is a chain of ten dependent rounds, and two
  // independent chains, interleaved round by round (PhiloxLanes::Words), keep the multiplier busy
  // while the other waits.
  HWY_ALIGN std::uint8_t random[8 * hn::MaxLanes(DF())];
  PhiloxLanes philox(seed, stream);
  const hn::RebindToUnsigned<DF> du;
  for (; i + 8 * lanes <= n; i += 8 * lanes) {
    hn::Vec<decltype(du)> words[2];
    philox.Words((first_index + i) / 4, words);
    hn::Store(words[0], du, reinterpret_cast<std::uint32_t*>(random));
    hn::Store(words[1], du, reinterpret_cast<std::uint32_t*>(random + 4 * lanes));
    for (std::size_t q = 0; q < 8; ++q) {
      // Without it, perf record put ~20% of the kernel's samples on the instruction after x's
      // load, at 0.47 of memcpy on an Ice Lake Xeon (issue 46 item 2, docs/performance.md).
      hwy::Prefetch(x + i + q * lanes + kPrefetchBytes / sizeof(float));
      Codes(x + i + q * lanes, random + q * lanes, codes + i + q * lanes);
    }
  }
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    hn::Store(philox((first_index + i) / 4), du, reinterpret_cast<std::uint32_t*>(random));
    for (std::size_t q = 0; q < 4; ++q) {
      Codes(x + i + q * lanes, random + q * lanes, codes + i + q * lanes);
    }
  }
  // The last partial vector of words (a row of a tensor rarely holds a multiple of 4 lanes): its
  // words drawn as for a whole one, the elements through a zero-padded copy.
  if (i + 4 <= n) {
    HWY_ALIGN float padded[4 * hn::MaxLanes(DF())] = {};
    HWY_ALIGN std::uint8_t padded_codes[4 * hn::MaxLanes(DF())];
    const std::size_t rest = n - i;
    for (std::size_t j = 0; j < rest; ++j) padded[j] = x[i + j];
    hn::Store(philox((first_index + i) / 4), du, reinterpret_cast<std::uint32_t*>(random));
    for (std::size_t q = 0; q < 4; ++q) {
      Codes(padded + q * lanes, random + q * lanes, padded_codes + q * lanes);
    }
    for (std::size_t j = 0; j < rest; ++j) codes[i + j] = padded_codes[j];
    i = n;
  }
  for (; i < n; ++i) scalar(i);
}

const char* E2m1StochasticTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::fp4_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim {
namespace fp4_detail {
HWY_EXPORT(E2m1StochasticLanes);
HWY_EXPORT(E2m1StochasticTargetName);

void e2m1_stochastic_lanes(const float* x, std::size_t n, std::uint64_t seed, std::uint64_t stream,
                           std::uint64_t first_index, std::uint8_t* codes) {
  HWY_DYNAMIC_DISPATCH(E2m1StochasticLanes)(x, n, seed, stream, first_index, codes);
}
}  // namespace fp4_detail

const char* e2m1_stochastic_target_name() {
  return HWY_DYNAMIC_DISPATCH(fp4_detail::E2m1StochasticTargetName)();
}
}  // namespace fp8lab::sim
#endif
