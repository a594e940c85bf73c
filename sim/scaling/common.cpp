#include "sim/scaling/common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/element_count.hpp"

namespace fp8lab::sim::scaling {

float fp8_max(Format format) { return static_cast<float>(spec(format).max_finite()); }

void check_tensor_arguments(const char* function, std::size_t size, std::int64_t rows,
                            std::int64_t cols, Format format, bool subbyte_allowed) {
  const std::string where(function);
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument(where + ": rows = " + std::to_string(rows) +
                                ", cols = " + std::to_string(cols) + "; both must be >= 1");
  }
  checked_element_count(function, rows, cols, size, "x.size()");
  if (!is_fp8(format) && !(subbyte_allowed && is_subbyte(format))) {
    throw std::invalid_argument(where + ": format = " + spec(format).name +
                                "; accepted: e4m3, e5m2" +
                                (subbyte_allowed ? ", e2m1, e2m3, e3m2" : ""));
  }
}

bool contains_nan(std::span<const float> x) {
  // Counting NaNs (x != x) keeps the loop branch-free so that it vectorizes.
  std::size_t nans = 0;
  for (const float v : x) nans += static_cast<std::size_t>(v != v);
  return nans != 0;
}

float amax_nan_propagating(std::span<const float> x) {
  // One pass over memory: each chunk is checked for NaN and then reduced while it is still in L1
  // (16 KiB), instead of a NaN pass and an amax pass over the whole tensor. A max has no order,
  // so the chunking changes no bit.
  constexpr std::size_t kChunk = 4096;
  float result = 0.0f;
  for (std::size_t begin = 0; begin < x.size(); begin += kChunk) {
    const auto chunk = x.subspan(begin, std::min(kChunk, x.size() - begin));
    if (contains_nan(chunk)) return std::numeric_limits<float>::quiet_NaN();
    result = std::max(result, amax(chunk));
  }
  return result;
}

float torch_log2_f32(float x) { return static_cast<float>(std::log2(static_cast<double>(x))); }

}  // namespace fp8lab::sim::scaling
