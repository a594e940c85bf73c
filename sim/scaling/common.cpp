#include "sim/scaling/common.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/element_count.hpp"

namespace fp8lab::sim::scaling {

float fp8_max(Format format) { return static_cast<float>(spec(format).max_finite()); }

void check_tensor_arguments(const char* function, std::size_t size, std::int64_t rows,
                            std::int64_t cols, Format format) {
  const std::string where(function);
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument(where + ": rows = " + std::to_string(rows) + ", cols = " +
                                std::to_string(cols) + "; both must be >= 1");
  }
  checked_element_count(function, rows, cols, size, "x.size()");
  if (!is_fp8(format)) {
    throw std::invalid_argument(where + ": format = " + spec(format).name +
                                "; accepted: e4m3, e5m2");
  }
}

bool contains_nan(std::span<const float> x) {
  // Counting NaNs (x != x) keeps the loop branch-free so that it vectorizes.
  std::size_t nans = 0;
  for (const float v : x) nans += static_cast<std::size_t>(v != v);
  return nans != 0;
}

float amax_nan_propagating(std::span<const float> x) {
  return contains_nan(x) ? std::numeric_limits<float>::quiet_NaN() : amax(x);
}

float torch_log2_f32(float x) { return static_cast<float>(std::log2(static_cast<double>(x))); }

}  // namespace fp8lab::sim::scaling
