// sim/rng.hpp: Philox4x32-10 against Random123's known-answer vectors (tests/kat_vectors of
// github.com/DEShawResearch/random123, the three "philox4x32 10" lines: counter, key -> output),
// and the (seed, stream, index) -> word mapping documented in the header.
#include <catch2/catch.hpp>
#include <cstdio>

#include "sim/rng.hpp"

using namespace fp8lab::sim;

namespace {
struct KnownAnswer {
  Philox4x32Block counter;
  std::uint32_t k0, k1;
  Philox4x32Block expected;
};
constexpr KnownAnswer kKnownAnswers[] = {
    {{{0x00000000, 0x00000000, 0x00000000, 0x00000000}},
     0x00000000,
     0x00000000,
     {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
    {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
     0xffffffff,
     0xffffffff,
     {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
    {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
     0xa4093822,
     0x299f31d0,
     {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
};
}  // namespace

TEST_CASE("Philox4x32-10 reproduces Random123's known-answer vectors") {
  for (const KnownAnswer& k : kKnownAnswers) {
    const Philox4x32Block out = philox4x32_10(k.counter, k.k0, k.k1);
    for (int w = 0; w < 4; ++w) {
      INFO("counter word0 0x" << std::hex << k.counter.word[0] << ", output word " << w
                              << ": got 0x" << out.word[w] << ", expected 0x"
                              << k.expected.word[w]);
      CHECK(out.word[w] == k.expected.word[w]);
    }
  }
}

TEST_CASE("philox_random_word maps (seed, stream, index) to key and counter as documented") {
  // The third known-answer vector, reached through the documented mapping:
  // key = {seed lo, seed hi}, counter = {index lo, index hi, stream lo, stream hi}, word 0.
  const std::uint64_t seed = 0x299f31d0'a4093822ull;
  const std::uint64_t index = 0x85a308d3'243f6a88ull;
  const std::uint64_t stream = 0x03707344'13198a2eull;
  CHECK(philox_random_word(seed, stream, index) == 0xd16cfe09u);
  // All-ones: the second vector.
  CHECK(philox_random_word(~0ull, ~0ull, ~0ull) == 0x408f276du);
  static_assert(philox_random_word(0, 0, 0) == 0x6627e8d5u, "usable in constant expressions");
}

TEST_CASE("philox_random_word: neighbouring indices, streams and seeds give different words") {
  // A guard against a mapping that ignores one of its inputs (e.g. only the low index word).
  const std::uint32_t base = philox_random_word(1, 2, 3);
  CHECK(philox_random_word(1, 2, 3 + (1ull << 32)) != base);
  CHECK(philox_random_word(1, 2 + (1ull << 32), 3) != base);
  CHECK(philox_random_word(1 + (1ull << 32), 2, 3) != base);
  CHECK(philox_random_word(1, 3, 3) != base);
  CHECK(philox_random_word(2, 2, 3) != base);
}

TEST_CASE("philox_block_word: word index & 3 of the block at counter index >> 2") {
  // The first known-answer vector (counter 0, key 0) is the block of indices 0..3 under seed 0 and
  // stream 0: its four words, in order.
  for (std::uint64_t index = 0; index < 4; ++index) {
    INFO("index " << index);
    CHECK(philox_block_word(0, 0, index) == kKnownAnswers[0].expected.word[index]);
  }
  static_assert(philox_block_word(0, 0, 3) == 0x9b00dbd8u, "usable in constant expressions");
  // Every index near block boundaries and high words, against philox4x32_10 with the counter built
  // by hand (key = seed's halves, counter = block's halves then stream's halves).
  const std::uint64_t seeds[] = {0, 0x299f31d0'a4093822ull, ~0ull};
  const std::uint64_t streams[] = {0, 0x03707344'13198a2eull, ~0ull};
  const std::uint64_t blocks[] = {
      0, 1, 0xFFFF'FFFFull, 0x1'0000'0000ull, 0x21'6A88'243F'6A88ull, (1ull << 62) - 1};
  for (const std::uint64_t seed : seeds) {
    for (const std::uint64_t stream : streams) {
      for (const std::uint64_t block : blocks) {
        const Philox4x32Block out = philox4x32_10(
            {{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
              static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}},
            static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
        for (int w = 0; w < 4; ++w) {
          const std::uint64_t index = 4 * block + static_cast<std::uint64_t>(w);
          INFO("seed 0x" << std::hex << seed << " stream 0x" << stream << " index 0x" << index);
          CHECK(philox_block_word(seed, stream, index) == out.word[w]);
        }
      }
    }
  }
  // The four words of a block differ, and neighbouring blocks differ (a guard against a mapping
  // that takes the same word for every element of a block, or ignores the block).
  CHECK(philox_block_word(1, 2, 8) != philox_block_word(1, 2, 9));
  CHECK(philox_block_word(1, 2, 8) != philox_block_word(1, 2, 12));
  CHECK(philox_block_word(1, 2, 8) != philox_block_word(1, 2, 8 + (1ull << 34)));
}
