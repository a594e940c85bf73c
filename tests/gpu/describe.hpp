// One-line descriptions of mismatches for the gpu tests: index, input, expected vs actual, each as
// bits and as a value (STYLE.md §10).
#pragma once

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/cast.hpp"

namespace fp8lab::testing {

inline std::string float_text(float v) {
  char text[48];
  std::snprintf(text, sizeof text, "0x%08X (%.9g)", std::bit_cast<std::uint32_t>(v),
                static_cast<double>(v));
  return text;
}

inline std::string code_text(std::uint8_t code, sim::Format format) {
  char text[48];
  std::snprintf(text, sizeof text, "0x%02X (%.9g)", code,
                static_cast<double>(sim::decode_fp8(code, format)));
  return text;
}

inline std::string code_mismatch(const char* what, std::size_t index, float input,
                                 std::uint8_t expected, std::uint8_t actual, sim::Format format) {
  return std::string(what) + "[" + std::to_string(index) + "]: x = " + float_text(input) +
         ", sim " + code_text(expected, format) + ", gpu " + code_text(actual, format);
}

inline std::string float_mismatch(const char* what, std::size_t index, float expected,
                                  float actual) {
  return std::string(what) + "[" + std::to_string(index) + "]: sim " + float_text(expected) +
         ", gpu " + float_text(actual);
}

// Bitwise float equality (NaN payloads included, -0 != +0).
inline bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

}  // namespace fp8lab::testing
