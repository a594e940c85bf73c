// philox_words: sim/rng.hpp's Philox4x32-10 words in Highway lanes, one element a lane, for the
// stochastic casts (quantize.cpp's FP8, fp4_stochastic_lanes.cpp's E2M1). A Highway per-target
// header: include it after <hwy/highway.h> in a foreach_target file.
#if defined(FP8LAB_SIM_PHILOX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FP8LAB_SIM_PHILOX_INL_H_
#undef FP8LAB_SIM_PHILOX_INL_H_
#else
#define FP8LAB_SIM_PHILOX_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "sim/rng.hpp"

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::HWY_NAMESPACE {
namespace philox_hn = hwy::HWY_NAMESPACE;

// Philox4x32-10 output word 0 for the elements first, first + 1, ... (sim/rng.hpp's mapping), one
// lane each. Two half-vectors of 64-bit lanes carry the counters, the even elements in one and the
// odd ones in the other, each 32-bit word in the low half of its 64-bit lane: MulEven (vpmuludq)
// then gives the whole 32x32 -> 64-bit product per lane, whose low half is already where the next
// round reads its word, and Shuffle2301 (a shuffle, off the multiplier's port) brings the high
// half down. The upper halves of the lanes hold leftovers that nothing reads: MulEven and the final
// interleave take only low halves. Rounds 1 and 2 each have a multiplier input that is the same in
// every lane (the counter's words 1..3 are the index's high word and the stream), so they run on
// scalars: one vector product per round instead of two; round 10 needs only word 0's product.
HWY_INLINE philox_hn::Vec<philox_hn::RebindToUnsigned<philox_hn::ScalableTag<float>>> philox_words(
    std::uint64_t seed, std::uint64_t stream, std::uint64_t first) {
  namespace hn = philox_hn;
  using DU32 = hn::RebindToUnsigned<hn::ScalableTag<float>>;
  using VU [[maybe_unused]] = hn::Vec<DU32>;
  const DU32 du;
  const std::size_t lanes = hn::Lanes(du);
  const auto first_lo = static_cast<std::uint32_t>(first);
  if (HWY_TARGET == HWY_SCALAR || first_lo > 0xFFFF'FFFFu - (lanes - 1)) {
    // One lane, or the index's low word wraps inside this vector: per element, as rng.hpp.
    HWY_ALIGN std::uint32_t words[hn::MaxLanes(DU32())];
    for (std::size_t j = 0; j < lanes; ++j) words[j] = philox_random_word(seed, stream, first + j);
    return hn::Load(du, words);
  }
#if HWY_TARGET != HWY_SCALAR
  const hn::Repartition<std::uint64_t, DU32> du64;
  auto product = [](std::uint32_t a, std::uint32_t m) { return std::uint64_t{a} * m; };
  auto high = [](std::uint64_t p) { return static_cast<std::uint32_t>(p >> 32); };
  auto low = [](std::uint64_t p) { return static_cast<std::uint32_t>(p); };
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  const std::uint32_t index_hi = static_cast<std::uint32_t>(first >> 32);
  const auto stream_lo = static_cast<std::uint32_t>(stream);
  const auto stream_hi = static_cast<std::uint32_t>(stream >> 32);
  const VU m0 = hn::Set(du, kPhiloxM0), m1 = hn::Set(du, kPhiloxM1);
  // (hi, lo) of a * m for the low word of each 64-bit lane, in the low words of two vectors.
  auto mul_hi_lo = [&](VU a, VU m, VU& hi, VU& lo) HWY_ATTR {
    lo = hn::BitCast(du, hn::MulEven(a, m));
    hi = hn::Shuffle2301(lo);
  };
  // Round 1: c0 varies; c1 = index_hi, c2 = stream_lo, c3 = stream_hi do not.
  //   c = { hi(M1 c2) ^ c1 ^ k0,  lo(M1 c2),  hi(M0 c0) ^ c3 ^ k1,  lo(M0 c0) }
  const std::uint64_t p1_round1 = product(stream_lo, kPhiloxM1);
  const std::uint32_t c0_round1 = high(p1_round1) ^ index_hi ^ k0;  // every lane
  const std::uint32_t c1_round1 = low(p1_round1);                   // every lane
  // Even elements first + 0, 2, 4, ... in `even`, odd ones in `odd`: counter word 0, no wrap
  // (checked above).
  const VU lane_pairs = hn::BitCast(du, hn::ShiftLeft<1>(hn::Iota(du64, 0)));
  const VU even_c0 = hn::Add(hn::Set(du, first_lo), lane_pairs);
  const VU odd_c0 = hn::Add(even_c0, hn::Set(du, 1u));
  VU c[2][4];
  int half = 0;
  for (const VU counter0 : {even_c0, odd_c0}) {
    VU hi0, lo0;
    mul_hi_lo(counter0, m0, hi0, lo0);
    c[half][0] = hn::Set(du, c0_round1);
    c[half][1] = hn::Set(du, c1_round1);
    c[half][2] = hn::Xor(hi0, hn::Set(du, stream_hi ^ k1));
    c[half][3] = lo0;
    ++half;
  }
  // Round 2: c0 and c1 are still the same in every lane, so M0 * c0 is a scalar product.
  k0 += kPhiloxW0;
  k1 += kPhiloxW1;
  const std::uint64_t p0_round2 = product(c0_round1, kPhiloxM0);
  for (VU* v : {c[0], c[1]}) {
    VU hi1, lo1;
    mul_hi_lo(v[2], m1, hi1, lo1);
    v[0] = hn::Xor(hi1, hn::Set(du, c1_round1 ^ k0));
    v[1] = lo1;
    v[2] = hn::Xor(hn::Set(du, high(p0_round2) ^ k1), v[3]);
    v[3] = hn::Set(du, low(p0_round2));
  }
  for (int round = 2; round < kPhiloxRounds - 1; ++round) {
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
    const VU key0 = hn::Set(du, k0), key1 = hn::Set(du, k1);
    for (VU* v : {c[0], c[1]}) {
      VU hi0, lo0, hi1, lo1;
      mul_hi_lo(v[0], m0, hi0, lo0);
      mul_hi_lo(v[2], m1, hi1, lo1);
      v[0] = hn::Xor3(hi1, v[1], key0);
      v[1] = lo1;
      v[2] = hn::Xor3(hi0, v[3], key1);
      v[3] = lo0;
    }
  }
  // Round 10: only word 0 is returned, hi(M1 c2) ^ c1 ^ k0; M0 * c0 is not needed.
  k0 += kPhiloxW0;
  for (VU* v : {c[0], c[1]}) {
    VU hi1, lo1;
    mul_hi_lo(v[2], m1, hi1, lo1);
    v[0] = hn::Xor3(hi1, v[1], hn::Set(du, k0));
  }
  // Word 0 of element 2j is the low word of lane j of c[0][0]; of element 2j + 1, of c[1][0].
  return hn::OddEven(hn::BitCast(du, hn::ShiftLeft<32>(hn::BitCast(du64, c[1][0]))), c[0][0]);
#endif
}

}  // namespace fp8lab::sim::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FP8LAB_SIM_PHILOX_INL_H_
