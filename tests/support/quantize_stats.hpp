// The one comparison of two quantize calls' statistics in the sim tests: amax by its bits (a
// different NaN payload or -0 is a difference), then each count, every one a CHECK of its own so
// that a failure names the field.
#pragma once

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

#include "sim/quantize.hpp"

namespace fp8lab::testing {

inline void check_same_stats(const sim::QuantizeStats& got, const sim::QuantizeStats& want) {
  CHECK(std::bit_cast<std::uint32_t>(got.amax) == std::bit_cast<std::uint32_t>(want.amax));
  CHECK(got.count == want.count);
  CHECK(got.saturated == want.saturated);
  CHECK(got.underflowed == want.underflowed);
  CHECK(got.nan == want.nan);
}

}  // namespace fp8lab::testing
