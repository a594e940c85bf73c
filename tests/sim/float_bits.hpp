// The fp32 specials and bit views of the sim tests, which compare results bit for bit.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace fp8lab::testing {

inline constexpr float kFltMax = std::numeric_limits<float>::max();
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

inline std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
inline float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

}  // namespace fp8lab::testing
