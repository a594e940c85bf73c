// PhiloxLanes: sim/rng.hpp's Philox4x32-10 words in Highway lanes, one element a lane, for the
// stochastic casts (quantize.cpp's FP8 through BlockWords, fp4_stochastic_lanes.cpp's E2M1 and the
// MX dither through Words). A Highway per-target header: include it after <hwy/highway.h> in a
// foreach_target file.
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
// lane each: PhiloxLanes(seed, stream)(first). Two half-vectors of 64-bit lanes carry the counters,
// the even elements in one and the odd ones in the other, each 32-bit word in the low half of its
// 64-bit lane: MulEven (vpmuludq) then gives the whole 32x32 -> 64-bit product per lane, whose low
// half is already where the next round reads its word, and Shuffle2301 (a shuffle, off the
// multiplier's port) brings the high half down. The upper halves of the lanes hold leftovers that
// nothing reads: MulEven and the final interleave take only low halves, except where said.
// Rounds 1 and 2 each have a multiplier input that is the same in every lane (the counter's words
// 1..3 are the index's high word and the stream), so they run on scalars: one vector product per
// round instead of two. Those scalars depend on the call's seed and stream and on the index's high
// word only, so they are kept in vectors across calls and redone when the high word changes.
// Only word 0 is returned, so round 9 computes only the words round 10 reads (c1 and c2) and
// round 10 only word 0's product.
class PhiloxLanes {
  using D = philox_hn::RebindToUnsigned<philox_hn::ScalableTag<float>>;
  using V = philox_hn::Vec<D>;

 public:
  HWY_INLINE PhiloxLanes(std::uint64_t seed, std::uint64_t stream)
      : seed_(seed), stream_(stream), index_hi_(0) {
    namespace hn = philox_hn;
    const D du;
    std::uint32_t k0 = static_cast<std::uint32_t>(seed),
                  k1 = static_cast<std::uint32_t>(seed >> 32);
    // Round r (1-based) uses the key bumped r - 1 times.
    for (int round = 0; round < kPhiloxRounds; ++round) {
      if (round >= 2) {
        key0_[round - 2] = hn::Set(du, k0);
        key1_[round - 2] = hn::Set(du, k1);
      }
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    set_index_hi(0);
#if HWY_TARGET != HWY_SCALAR
    const philox_hn::Repartition<std::uint64_t, D> du64;
    const auto lane = hn::Iota(du64, 0);
    const auto odd = hn::TestBit(lane, hn::Set(du64, 1));
    const auto half = hn::Set(du64, hn::Lanes(du64) / 2);
    block_order_ = hn::BitCast(du, hn::Add(hn::ShiftRight<1>(lane), hn::IfThenElseZero(odd, half)));
#else
    block_order_ = hn::Zero(du);
#endif
  }

  HWY_INLINE V operator()(std::uint64_t first) {
    V words[1];
    Words(first, words);
    return words[0];
  }

  // words[q] = the words of elements first + q * Lanes, ..., one element at a time through
  // word_of (sim/rng.hpp's philox_random_word or philox_block_word): the fallback of Words and
  // BlockWords where lanes cannot hold the counters (one lane, or a counter's low word wraps).
  template <int kCount, class WordOf>
  HWY_INLINE void PerElement(std::uint64_t first, V (&words)[kCount], WordOf word_of) const {
    namespace hn = philox_hn;
    const D du;
    const std::size_t lanes = hn::Lanes(du);
    for (int q = 0; q < kCount; ++q) {
      HWY_ALIGN std::uint32_t w[hn::MaxLanes(D())];
      for (std::size_t j = 0; j < lanes; ++j) w[j] = word_of(seed_, stream_, first + q * lanes + j);
      words[q] = hn::Load(du, w);
    }
  }

  // words[q] = the words of elements first + q * Lanes, ...: kVectors vectors whose ten rounds are
  // interleaved round by round. Each round of one half-vector is a chain of dependent operations
  // (a multiply, a shuffle, an XOR), and GCC emits the code in the order written: with one
  // vector's two halves per round, the chains left ports idle (FP8 stochastic rounding: 31.6-32.3
  // ms with one vector, 30.4-30.7 with two, same session; docs/performance.md).
  template <int kVectors>
  HWY_INLINE void Words(std::uint64_t first, V (&words)[kVectors]) {
    namespace hn = philox_hn;
    const D du;
    const std::size_t lanes = hn::Lanes(du);
    const auto first_lo = static_cast<std::uint32_t>(first);
    if (HWY_TARGET == HWY_SCALAR || first_lo > 0xFFFF'FFFFu - (kVectors * lanes - 1)) {
      // One lane, or the index's low word wraps inside these vectors: per element, as rng.hpp.
      PerElement(first, words, philox_random_word);
      return;
    }
#if HWY_TARGET != HWY_SCALAR
    const hn::Repartition<std::uint64_t, D> du64;
    const V m1 = hn::Set(du, kPhiloxM1);
    constexpr int kHalves = 2 * kVectors;
    // Half 2q holds the even elements of vector q (first + q * lanes + 0, 2, 4, ...), half 2q + 1
    // the odd ones: counter word 0, no wrap (checked above).
    const V lane_pairs = hn::BitCast(du, hn::ShiftLeft<1>(hn::Iota(du64, 0)));
    V c[kHalves][4];
    for (int h = 0; h < kHalves; ++h) {
      const auto offset = static_cast<std::uint32_t>((h / 2) * lanes + h % 2);
      c[h][0] = hn::Add(hn::Set(du, first_lo + offset), lane_pairs);
    }
    Rounds(static_cast<std::uint32_t>(first >> 32), c, kPhiloxRounds - 2);
    // Round 9: round 10 reads c1 = lo(M1 c2) and c2 = hi(M0 c0) ^ c3 ^ k1 only.
    const V m0 = hn::Set(du, kPhiloxM0);
    for (V* v : c) {
      const V lo0 = hn::BitCast(du, hn::MulEven(v[0], m0));
      v[1] = hn::BitCast(du, hn::MulEven(v[2], m1));
      v[2] = hn::Xor3(hn::Shuffle2301(lo0), v[3], key1_[kPhiloxRounds - 4]);
    }
    // Round 10, word 0 = hi(M1 c2) ^ c1 ^ k0. Element 2j's word goes to the low half of lane j of
    // the result (even half: the high half brought down), element 2j + 1's to its high half (odd
    // half: the product's high half stays, c1 and the key go up).
    const V key0 = key0_[kPhiloxRounds - 3];
    for (int q = 0; q < kVectors; ++q) {
      const V* even = c[2 * q];
      const V* odd = c[2 * q + 1];
      const V hi_even = hn::Shuffle2301(hn::BitCast(du, hn::MulEven(even[2], m1)));
      const V even_word = hn::Xor3(hi_even, even[1], key0);
      const V odd_product = hn::BitCast(du, hn::MulEven(odd[2], m1));
      const V odd_word = hn::Xor3(
          odd_product, hn::BitCast(du, hn::ShiftLeft<32>(hn::BitCast(du64, odd[1]))), key0);
      words[q] = hn::OddEven(odd_word, even_word);
    }
#endif
  }

  // The FP8 stream (sim/rng.hpp philox_block_word): element e draws word e & 3 of the block of
  // counter e >> 2. words[q] = the words of elements first + q * Lanes, ..., 2 * kHalves vectors
  // from kHalves half-vectors of blocks (one block per 64-bit lane, all four of its words kept),
  // whose rounds are interleaved as Words' are. A half-vector of L 64-bit lanes holds L blocks,
  // 4L elements, two vectors: lane 2k holds block k and lane 2k + 1 block L / 2 + k, so that
  // InterleaveLower/Upper of (words 0, 1) and (words 2, 3), which pair the lanes 2k of each
  // 128-bit part and then the lanes 2k + 1, give blocks 0 .. L/2 - 1 and L/2 .. L - 1 in order.
  // A quarter of Words' Philox work per element. first not a multiple of 4, or a block counter
  // whose low word wraps inside the call: per element, as rng.hpp.
  template <int kHalves>
  HWY_INLINE void BlockWords(std::uint64_t first, V (&words)[2 * kHalves]) {
    namespace hn = philox_hn;
    const D du;
    const std::size_t lanes = hn::Lanes(du);
    const std::uint64_t block = first >> 2;
    const auto block_lo = static_cast<std::uint32_t>(block);
    const std::size_t blocks_per_half = lanes / 2;
    if (HWY_TARGET == HWY_SCALAR || (first & 3) != 0 ||
        block_lo > 0xFFFF'FFFFu - (kHalves * blocks_per_half - 1)) {
      PerElement(first, words, philox_block_word);
      return;
    }
#if HWY_TARGET != HWY_SCALAR
    const hn::Repartition<std::uint64_t, D> du64;
    V c[kHalves][4];
    for (int h = 0; h < kHalves; ++h) {
      const auto offset = static_cast<std::uint32_t>(h * blocks_per_half);
      c[h][0] = hn::Add(hn::Set(du, block_lo + offset), block_order_);
    }
    Rounds(static_cast<std::uint32_t>(block >> 32), c, kPhiloxRounds - 1);
    // Round 10, all four words: word 0 = hi(M1 c2) ^ c1 ^ k0 and word 1 = lo(M1 c2) are the
    // swapped product with its low half replaced, words 2 and 3 likewise from M0 c0.
    const V m0 = hn::Set(du, kPhiloxM0), m1 = hn::Set(du, kPhiloxM1);
    const V key0 = key0_[kPhiloxRounds - 3], key1 = key1_[kPhiloxRounds - 3];
    for (int h = 0; h < kHalves; ++h) {
      const V* v = c[h];
      const V swapped1 = hn::Shuffle2301(hn::BitCast(du, hn::MulEven(v[2], m1)));
      const V swapped0 = hn::Shuffle2301(hn::BitCast(du, hn::MulEven(v[0], m0)));
      const auto w01 = hn::BitCast(du64, hn::OddEven(swapped1, hn::Xor3(swapped1, v[1], key0)));
      const auto w23 = hn::BitCast(du64, hn::OddEven(swapped0, hn::Xor3(swapped0, v[3], key1)));
      words[2 * h] = hn::BitCast(du, hn::InterleaveLower(du64, w01, w23));
      words[2 * h + 1] = hn::BitCast(du, hn::InterleaveUpper(du64, w01, w23));
    }
#endif
  }

 private:
  // Rounds 1 .. end of the halves c[h], whose c[h][0] holds counter word 0 (the other counter
  // words are index_hi and the stream): rounds 1 and 2 from the scalars of set_index_hi, then full
  // rounds, interleaved half by half.
  template <int kHalves>
  HWY_INLINE void Rounds(std::uint32_t index_hi, V (&c)[kHalves][4], int end) {
#if HWY_TARGET != HWY_SCALAR
    namespace hn = philox_hn;
    const D du;
    if (index_hi != index_hi_) set_index_hi(index_hi);
    const V m0 = hn::Set(du, kPhiloxM0), m1 = hn::Set(du, kPhiloxM1);
    // (hi, lo) of a * m for the low word of each 64-bit lane, in the low words of two vectors.
    auto mul_hi_lo = [&](V a, V m, V& hi, V& lo) HWY_ATTR {
      lo = hn::BitCast(du, hn::MulEven(a, m));
      hi = hn::Shuffle2301(lo);
    };
    for (V* v : c) {
      // Round 1: c = { hi(M1 c2) ^ c1 ^ k0,  lo(M1 c2),  hi(M0 c0) ^ c3 ^ k1,  lo(M0 c0) }, the
      // first two the same in every lane. Round 2's M0 * c0 is then a scalar product too.
      V hi0, lo0, hi1, lo1;
      mul_hi_lo(v[0], m0, hi0, lo0);
      const V c2 = hn::Xor(hi0, round1_c3_k1_);
      mul_hi_lo(c2, m1, hi1, lo1);
      v[0] = hn::Xor(hi1, round2_c1_k0_);
      v[1] = lo1;
      v[2] = hn::Xor(round2_hi0_k1_, lo0);
      v[3] = round2_lo0_;
    }
    for (int round = 2; round < end; ++round) {
      const V key0 = key0_[round - 2], key1 = key1_[round - 2];
      for (V* v : c) {
        V hi0, lo0, hi1, lo1;
        mul_hi_lo(v[0], m0, hi0, lo0);
        mul_hi_lo(v[2], m1, hi1, lo1);
        v[0] = hn::Xor3(hi1, v[1], key0);
        v[1] = lo1;
        v[2] = hn::Xor3(hi0, v[3], key1);
        v[3] = lo0;
      }
    }
#else
    (void)index_hi;
    (void)c;
    (void)end;
#endif
  }

  // The round-1 and round-2 terms that depend on the index's high word (see operator()).
  HWY_INLINE void set_index_hi(std::uint32_t index_hi) {
    namespace hn = philox_hn;
    const D du;
    auto product = [](std::uint32_t a, std::uint32_t m) { return std::uint64_t{a} * m; };
    auto high = [](std::uint64_t p) { return static_cast<std::uint32_t>(p >> 32); };
    auto low = [](std::uint64_t p) { return static_cast<std::uint32_t>(p); };
    const std::uint32_t k0 = static_cast<std::uint32_t>(seed_);
    const std::uint32_t k1 = static_cast<std::uint32_t>(seed_ >> 32);
    const auto stream_lo = static_cast<std::uint32_t>(stream_);
    const auto stream_hi = static_cast<std::uint32_t>(stream_ >> 32);
    // Round 1: c0 = hi(M1 c2) ^ c1 ^ k0 and c1 = lo(M1 c2) in every lane; c2 = hi(M0 c0) ^ c3 ^ k1.
    const std::uint64_t p1_round1 = product(stream_lo, kPhiloxM1);
    const std::uint32_t c0_round1 = high(p1_round1) ^ index_hi ^ k0;
    const std::uint32_t c1_round1 = low(p1_round1);
    round1_c3_k1_ = hn::Set(du, stream_hi ^ k1);
    // Round 2 (keys bumped once): c0 = hi(M1 c2) ^ c1 ^ k0, c2 = hi(M0 c0) ^ c3 ^ k1, c3 =
    // lo(M0 c0), with round 1's c0 and c1 scalars.
    const std::uint64_t p0_round2 = product(c0_round1, kPhiloxM0);
    round2_c1_k0_ = hn::Set(du, c1_round1 ^ (k0 + kPhiloxW0));
    round2_hi0_k1_ = hn::Set(du, high(p0_round2) ^ (k1 + kPhiloxW1));
    round2_lo0_ = hn::Set(du, low(p0_round2));
    index_hi_ = index_hi;
  }

  std::uint64_t seed_, stream_;
  std::uint32_t index_hi_;
  // The keys of rounds 3..10 (key bumped 2..9 times): round r (1-based) reads index r - 3.
  V key0_[kPhiloxRounds - 2], key1_[kPhiloxRounds - 2];
  V round1_c3_k1_, round2_c1_k0_, round2_hi0_k1_, round2_lo0_;
  // BlockWords' block offset of each 64-bit lane, in its low word: lane 2k -> k, 2k + 1 -> L/2 + k.
  V block_order_;
};

}  // namespace fp8lab::sim::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FP8LAB_SIM_PHILOX_INL_H_
