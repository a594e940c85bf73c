// Argument checks shared by the scalar and vectorized quantize entry points.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "sim/format.hpp"

namespace fp8lab::sim {

// Throws std::invalid_argument naming the function and the offending argument.
inline void check_quantize_arguments(const char* function, std::size_t in_size,
                                     std::size_t out_size, Format format) {
  if (in_size != out_size) {
    throw std::invalid_argument(
        std::string(function) + ": out.size() = " + std::to_string(out_size) +
        " but x.size() = " + std::to_string(in_size) + "; they must be equal");
  }
  if (!is_fp8(format)) {
    throw std::invalid_argument(std::string(function) + ": format = " + spec(format).name +
                                "; accepted: e4m3, e5m2");
  }
}

}  // namespace fp8lab::sim
