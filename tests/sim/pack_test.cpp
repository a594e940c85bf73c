// Packed E2M1 storage (sim/pack.hpp): even element in the low nibble, odd counts, bad input.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "sim/pack.hpp"

using namespace fp8lab::sim;

TEST_CASE("pack_e2m1 puts element 2i low and 2i+1 high") {
  const std::vector<std::uint8_t> codes = {0x1, 0x2, 0xF, 0x8, 0x7};
  std::vector<std::uint8_t> packed(packed_e2m1_bytes(codes.size()));
  REQUIRE(packed.size() == 3);
  pack_e2m1(codes, packed);
  CHECK(packed[0] == 0x21);
  CHECK(packed[1] == 0x8F);
  CHECK(packed[2] == 0x07);  // odd count: the last high nibble is 0
  std::vector<std::uint8_t> back(codes.size());
  unpack_e2m1(packed, back);
  CHECK(back == codes);
}

TEST_CASE("pack / unpack round trip every pair of codes, even and odd lengths") {
  std::vector<std::uint8_t> codes;
  for (unsigned lo = 0; lo < 16; ++lo) {
    for (unsigned hi = 0; hi < 16; ++hi) {
      codes.push_back(static_cast<std::uint8_t>(lo));
      codes.push_back(static_cast<std::uint8_t>(hi));
    }
  }
  for (const std::size_t n : {codes.size(), codes.size() - 1, std::size_t{1}, std::size_t{0}}) {
    const std::vector<std::uint8_t> in(codes.begin(), codes.begin() + static_cast<long>(n));
    std::vector<std::uint8_t> packed(packed_e2m1_bytes(n), 0xAA);
    pack_e2m1(in, packed);
    for (std::size_t i = 0; i + 1 < n; i += 2) {
      INFO("n " << n << " pair " << i);
      REQUIRE(packed[i / 2] == (in[i] | (in[i + 1] << 4)));
    }
    std::vector<std::uint8_t> out(n, 0xAA);
    unpack_e2m1(packed, out);
    INFO("n " << n);
    CHECK(out == in);
  }
}

TEST_CASE("pack / unpack name what is wrong") {
  std::vector<std::uint8_t> packed(2);
  CHECK_THROWS_WITH(pack_e2m1(std::vector<std::uint8_t>{1, 2, 3, 4, 5}, packed),
                    Catch::Contains("5 codes need 3 packed bytes, got 2"));
  CHECK_THROWS_WITH(pack_e2m1(std::vector<std::uint8_t>{1, 0x10, 3}, packed),
                    Catch::Contains("codes[1] = 16"));
  std::vector<std::uint8_t> three(3);
  CHECK_THROWS_WITH(unpack_e2m1(std::vector<std::uint8_t>{0x21, 0x30}, three),
                    Catch::Contains("high nibble is 3"));
  CHECK_THROWS_WITH(unpack_e2m1(std::vector<std::uint8_t>{0x21}, three),
                    Catch::Contains("3 codes need 2 packed bytes, got 1"));
}
