// Counter-based random bits for stochastic rounding (docs/numerics.md §1 `stochastic`): Philox4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123 and cuRAND
// generator of the same name). Header-only and FP8LAB_HD: gpu/rng.cuh calls the same functions, so
// CPU and GPU draw identical bits for every element without any shared state.
//
// The exact mapping, which gpu/ must reproduce word for word:
//
//   key     = { k0, k1 }         = { seed & 0xFFFFFFFF, seed >> 32 }
//   counter = { c0, c1, c2, c3 } = { index & 0xFFFFFFFF, index >> 32,
//                                    stream & 0xFFFFFFFF, stream >> 32 }
//   word(seed, stream, index) = output word 0 of Philox4x32-10(counter, key)
//
// One Philox block per element (words 1..3 unused) keeps the element's word a pure function of
// (seed, stream, index): any split of a tensor into parts, threads or vector lanes draws the same
// bits. `index` is the element's position in the whole tensor (row-major), `stream` identifies the
// tensor (docs/numerics.md: "tensor id").
//
// One round, with the multipliers M0 = 0xD2511F53, M1 = 0xCD9E8D57 and (hi, lo) the two halves of
// a 32x32 -> 64 bit product:
//   (hi0, lo0) = M0 * c0;  (hi1, lo1) = M1 * c2
//   c = { hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0 }
// and between rounds the key is bumped by the Weyl constants W0 = 0x9E3779B9 (golden ratio),
// W1 = 0xBB67AE85 (sqrt(3) - 1): k0 += W0, k1 += W1. Ten rounds, nine bumps. Checked against
// Random123's known-answer vectors in tests/sim/rng_philox_test.cpp.
#pragma once

#include <cstdint>

#include "sim/format.hpp"  // FP8LAB_HD

namespace fp8lab::sim {

struct Philox4x32Block {
  std::uint32_t word[4];
};

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

// Philox4x32-10 of one 128-bit counter under a 64-bit key.
FP8LAB_HD constexpr Philox4x32Block philox4x32_10(Philox4x32Block counter, std::uint32_t k0,
                                                  std::uint32_t k1) {
  std::uint32_t c0 = counter.word[0], c1 = counter.word[1];
  std::uint32_t c2 = counter.word[2], c3 = counter.word[3];
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
#if defined(__CUDA_ARCH__)
    // The same halves as one 32-bit high and one low multiply each: nvcc's code for the 64-bit
    // product spends an extra add on every high half (issue #7).
    const std::uint32_t hi0 = __umulhi(kPhiloxM0, c0), lo0 = kPhiloxM0 * c0;
    const std::uint32_t hi1 = __umulhi(kPhiloxM1, c2), lo1 = kPhiloxM1 * c2;
#else
    const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c2;
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
#endif
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return Philox4x32Block{{c0, c1, c2, c3}};
}

// The 32 random bits of element `index` of tensor `stream` under `seed` (mapping above).
FP8LAB_HD constexpr std::uint32_t philox_random_word(std::uint64_t seed, std::uint64_t stream,
                                                     std::uint64_t index) {
  const Philox4x32Block counter{
      {static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32),
       static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}};
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed),
                       static_cast<std::uint32_t>(seed >> 32))
      .word[0];
}

}  // namespace fp8lab::sim
