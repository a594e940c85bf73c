// Counter-based random bits for stochastic rounding (docs/numerics.md §1 `stochastic`): Philox4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123 and cuRAND
// generator of the same name). Header-only and FP8LAB_HD: gpu/ calls the same functions, so CPU
// and GPU draw identical bits for every element without any shared state.
//
// The exact mappings, which gpu/ must reproduce word for word. Both use
//
//   key     = { k0, k1 }         = { seed & 0xFFFFFFFF, seed >> 32 }
//   block(seed, stream, c)       = Philox4x32-10({ c & 0xFFFFFFFF, c >> 32,
//                                                  stream & 0xFFFFFFFF, stream >> 32 }, key)
//
// FP8 stochastic rounding (quantize_stochastic, gpu::quantize_stochastic, the device cast check),
// one block per four elements:
//   philox_block_word(seed, stream, index) = word (index & 3) of block(seed, stream, index >> 2)
// The element-wise word, one block per element (words 1..3 unused), for the other users: bf16
// master weights (sim/optim/adamw.cpp), E2M1's bytes (sim/fp4_stochastic.hpp: byte index % 4 of
// the element-wise word index / 4), the MX dither (sim/scaling/mx_dither.hpp):
//   philox_random_word(seed, stream, index) = word 0 of block(seed, stream, index)
//
// Either keeps an element's word a pure function of (seed, stream, index): any split of a tensor
// into parts (starting at any index), threads or vector lanes draws the same bits. `index` is the
// element's position in the whole tensor (row-major), `stream` identifies the tensor
// (docs/numerics.md: "tensor id"). The FP8 stream spends one block on four elements: the
// generator is about three quarters of the cast's work at one block per element
// (docs/performance.md).
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

// block(seed, stream, c) of the mapping above: the four words of counter c under seed.
FP8LAB_HD constexpr Philox4x32Block philox_block(std::uint64_t seed, std::uint64_t stream,
                                                 std::uint64_t c) {
  const Philox4x32Block counter{{static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32),
                                 static_cast<std::uint32_t>(stream),
                                 static_cast<std::uint32_t>(stream >> 32)}};
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed),
                       static_cast<std::uint32_t>(seed >> 32));
}

// The 32 random bits of element `index` of tensor `stream` under `seed`, one block per element
// (mapping above).
FP8LAB_HD constexpr std::uint32_t philox_random_word(std::uint64_t seed, std::uint64_t stream,
                                                     std::uint64_t index) {
  return philox_block(seed, stream, index).word[0];
}

// The 32 random bits of element `index` of an FP8 stochastically rounded tensor: word index & 3
// of the block of counter index >> 2 (mapping above).
FP8LAB_HD constexpr std::uint32_t philox_block_word(std::uint64_t seed, std::uint64_t stream,
                                                    std::uint64_t index) {
  return philox_block(seed, stream, index >> 2).word[index & 3];
}

}  // namespace fp8lab::sim
