// The one size check of a row-major [rows, cols] tensor, done before anything is allocated, walked
// or indexed from rows and cols. Without it rows * cols can wrap: rows = 2^62, cols = 4 is 2^64,
// which is 0 as a uint64, so an empty span "matches" and the block walk then reads 2^62 rows of
// nothing (and as int64 the product is undefined behaviour). Header-only so that gpu/'s host
// entry points use the same check (as they use sim/format.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace fp8lab::sim {

inline constexpr std::int64_t kMaxElementCount = std::numeric_limits<std::int64_t>::max();

// rows * cols. Throws std::invalid_argument naming `function`, both sizes and the limit when a
// size is negative or the product exceeds kMaxElementCount (2^63 - 1).
// The message is built in the throw branches only: this runs on every quantize, GEMM operand and
// GPU launch.
inline std::int64_t checked_element_count(const char* function, std::int64_t rows,
                                          std::int64_t cols) {
  const auto sizes = [&] {
    return std::string(function) + ": rows = " + std::to_string(rows) +
           ", cols = " + std::to_string(cols);
  };
  if (rows < 0 || cols < 0) throw std::invalid_argument(sizes() + "; sizes must be >= 0");
  if (cols != 0 && rows > kMaxElementCount / cols) {
    throw std::invalid_argument(sizes() + ": rows * cols exceeds " +
                                std::to_string(kMaxElementCount) + " (int64 max)");
  }
  return rows * cols;
}

// The same, and the tensor's storage (`what`, e.g. "x.size()") must hold exactly rows * cols
// elements: a span shorter than the shape would be read past its end, a longer one means the
// caller's shape is not the data's.
inline std::int64_t checked_element_count(const char* function, std::int64_t rows,
                                          std::int64_t cols, std::size_t size, const char* what) {
  const std::int64_t count = checked_element_count(function, rows, cols);
  if (static_cast<std::uint64_t>(count) != size) {
    throw std::invalid_argument(std::string(function) + ": " + what + " = " + std::to_string(size) +
                                " but rows * cols = " + std::to_string(rows) + " * " +
                                std::to_string(cols) + " = " + std::to_string(count));
  }
  return count;
}

// ceil(n / d) for n >= 0, d >= 1, without the overflow of (n + d - 1) / d near int64 max.
constexpr std::int64_t ceil_div(std::int64_t n, std::int64_t d) {
  return n / d + (n % d != 0 ? 1 : 0);
}

}  // namespace fp8lab::sim
