// The transpose of a row-major [rows, cols] matrix, row-major [cols, rows] (element (r, c) moves to
// c * rows + r): a columnwise copy as stored (scaling/stored.cpp), and what the sim tests compare
// a columnwise result with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp8lab::sim {

template <typename T>
std::vector<T> transposed(const std::vector<T>& m, std::int64_t rows, std::int64_t cols) {
  std::vector<T> t(m.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      t[static_cast<std::size_t>(c * rows + r)] = m[static_cast<std::size_t>(r * cols + c)];
    }
  }
  return t;
}

}  // namespace fp8lab::sim
