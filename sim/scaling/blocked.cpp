#include "sim/scaling/blocked.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8lab::sim::scaling {
namespace {

std::size_t index(std::int64_t row, std::int64_t cols, std::int64_t col) {
  return static_cast<std::size_t>(row * cols + col);
}

// out[c * rows + r] = in[r * cols + c], in 32x32 tiles so that both sides stay in cache.
template <typename T>
void transpose(std::span<const T> in, std::int64_t rows, std::int64_t cols, std::span<T> out) {
  constexpr std::int64_t kTile = 32;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kTile) {
    for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::int64_t r1 = std::min(rows, r0 + kTile);
      const std::int64_t c1 = std::min(cols, c0 + kTile);
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) out[index(c, rows, r)] = in[index(r, cols, c)];
      }
    }
  }
}

// Blocks whose rows are contiguous runs of block.cols elements (every shape but N x 1).
QuantizeResult quantize_row_runs(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                 BlockShape block, Format format, bool store_e8m0,
                                 const BlockScaleRule& rule) {
  QuantizeResult result;
  QuantizedTensor& t = result.tensor;
  t.rows = rows;
  t.cols = cols;
  t.format = format;
  t.block_rows = block.rows;
  t.block_cols = block.cols;
  t.data.resize(x.size());
  const std::int64_t scale_rows = t.scale_rows();
  const std::int64_t scale_cols = t.scale_cols();
  const auto scale_count = static_cast<std::size_t>(scale_rows * scale_cols);
  t.scale_inv.resize(scale_count);
  t.scale.resize(scale_count);
  if (store_e8m0) t.scale_e8m0.resize(scale_count);

  const std::span<std::uint8_t> codes(t.data);
  // A block that spans whole rows is one contiguous run: quantize it in one call.
  const bool whole_rows = block.cols >= cols;
  for (std::int64_t bi = 0; bi < scale_rows; ++bi) {
    const std::int64_t r0 = bi * block.rows;
    const std::int64_t r1 = std::min(rows, r0 + block.rows);
    for (std::int64_t bj = 0; bj < scale_cols; ++bj) {
      const std::int64_t c0 = bj * block.cols;
      const std::int64_t width = std::min(cols, c0 + block.cols) - c0;
      const std::int64_t run_count = whole_rows ? 1 : r1 - r0;
      const std::int64_t run_length = whole_rows ? (r1 - r0) * cols : width;
      auto run = [&](std::int64_t k) {
        return index(r0 + k, cols, c0);
      };

      float block_amax = 0.0f;
      bool has_nan = false;
      for (std::int64_t k = 0; k < run_count; ++k) {
        const auto seg = x.subspan(run(k), static_cast<std::size_t>(run_length));
        block_amax = std::fmax(block_amax, amax(seg));
        has_nan = has_nan || contains_nan(seg);
      }
      const BlockScale bs = rule(block_amax, has_nan);
      const auto s = static_cast<std::size_t>(bi * scale_cols + bj);
      t.scale[s] = bs.scale;
      t.scale_inv[s] = bs.scale_inv;
      if (store_e8m0) t.scale_e8m0[s] = bs.e8m0;
      for (std::int64_t k = 0; k < run_count; ++k) {
        const auto len = static_cast<std::size_t>(run_length);
        result.stats.merge(quantize(x.subspan(run(k), len), bs.scale, format, Overflow::kSatFinite,
                                    codes.subspan(run(k), len)));
      }
    }
  }
  return result;
}

}  // namespace

QuantizeResult quantize_blocked(const char* function, std::span<const float> x, std::int64_t rows,
                                std::int64_t cols, BlockShape block, Format format,
                                bool store_e8m0, const BlockScaleRule& rule) {
  check_tensor_arguments(function, x.size(), rows, cols, format);
  if (block.rows < 1 || block.cols < 1) {
    throw std::invalid_argument(std::string(function) + ": block = " + std::to_string(block.rows) +
                                " x " + std::to_string(block.cols) + "; both must be >= 1");
  }
  if (block.cols > 1 || block.rows == 1) {
    return quantize_row_runs(x, rows, cols, block, format, store_e8m0, rule);
  }
  // N x 1 blocks (columnwise scales) run down the columns: quantize the transpose with 1 x N
  // blocks, where each block is a contiguous run, then transpose codes and scales back. Same
  // elements per block, same scale, so the same bytes as a strided walk.
  std::vector<float> xt(x.size());
  transpose<float>(x, rows, cols, xt);
  QuantizeResult rt =
      quantize_row_runs(xt, cols, rows, BlockShape{1, block.rows}, format, store_e8m0, rule);

  QuantizeResult result;
  result.stats = rt.stats;
  QuantizedTensor& t = result.tensor;
  t.rows = rows;
  t.cols = cols;
  t.format = format;
  t.block_rows = block.rows;
  t.block_cols = 1;
  t.data.resize(x.size());
  transpose<std::uint8_t>(rt.tensor.data, cols, rows, t.data);
  // rt's scales are [cols, ceil(rows / N)]; ours are [ceil(rows / N), cols].
  const std::int64_t scale_rows = t.scale_rows();
  t.scale_inv.resize(rt.tensor.scale_inv.size());
  t.scale.resize(rt.tensor.scale.size());
  transpose<float>(rt.tensor.scale_inv, cols, scale_rows, t.scale_inv);
  transpose<float>(rt.tensor.scale, cols, scale_rows, t.scale);
  if (store_e8m0) {
    t.scale_e8m0.resize(rt.tensor.scale_e8m0.size());
    transpose<std::uint8_t>(rt.tensor.scale_e8m0, cols, scale_rows, t.scale_e8m0);
  }
  return result;
}

}  // namespace fp8lab::sim::scaling
