// Two E2M1 codes a byte, even element low (see pack.hpp for whose layout this is).
#include "sim/pack.hpp"

#include <stdexcept>
#include <string>

namespace fp8lab::sim {
namespace {

void check_sizes(const char* function, std::size_t codes, std::size_t packed) {
  if (packed != packed_e2m1_bytes(codes)) {
    throw std::invalid_argument(std::string(function) + ": " + std::to_string(codes) +
                                " codes need " + std::to_string(packed_e2m1_bytes(codes)) +
                                " packed bytes, got " + std::to_string(packed));
  }
}

}  // namespace

void pack_e2m1(std::span<const std::uint8_t> codes, std::span<std::uint8_t> packed) {
  check_sizes("pack_e2m1", codes.size(), packed.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] > 0xF) {
      throw std::invalid_argument("pack_e2m1: codes[" + std::to_string(i) + "] = " +
                                  std::to_string(codes[i]) + " is not an E2M1 code (0..15)");
    }
  }
  for (std::size_t b = 0; b < packed.size(); ++b) {
    const std::size_t even = 2 * b;
    const std::uint8_t high = even + 1 < codes.size() ? codes[even + 1] : 0;
    packed[b] = static_cast<std::uint8_t>(codes[even] | (high << 4));
  }
}

void unpack_e2m1(std::span<const std::uint8_t> packed, std::span<std::uint8_t> codes) {
  check_sizes("unpack_e2m1", codes.size(), packed.size());
  if (codes.size() % 2 != 0 && (packed.back() >> 4) != 0) {
    throw std::invalid_argument("unpack_e2m1: " + std::to_string(codes.size()) +
                                " codes (odd) but the last byte's high nibble is " +
                                std::to_string(packed.back() >> 4) + ", not 0");
  }
  for (std::size_t i = 0; i < codes.size(); ++i) {
    codes[i] = static_cast<std::uint8_t>((packed[i / 2] >> (4 * (i % 2))) & 0xF);
  }
}

}  // namespace fp8lab::sim
