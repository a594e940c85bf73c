#include "sim/scaling/blocked.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8lab::sim::scaling {
namespace {

// The walk: bands of block.rows rows. Pass 1 sweeps the band row by row (contiguous, so N x 1
// blocks cost the same as 1 x N) and accumulates each block's amax and whether it holds a NaN. The
// rule turns them into scales. Pass 2 forms y = RN(x * s_block) per row and hands the row to
// sim::quantize with scale 1.0: RN(y * 1) = y exactly (NaN, ±0, ±Inf and subnormals included), so
// the codes are those of quantize(x_block, s_block). Two counts need the original x, not y:
// the amax (max |x|), and underflow where x != 0 but y = RN(x * s) is already 0 (quantize sees a
// zero there and does not count it).
struct BandAccumulator {
  std::vector<float> amax;           // per block of the band, NaN ignored (as fmaxf)
  std::vector<std::uint8_t> has_nan; // per block of the band

  void reset(std::size_t blocks) {
    amax.assign(blocks, 0.0f);
    has_nan.assign(blocks, 0);
  }
  // One contiguous run of a block (sim::amax is the vectorized fmaxf reduction).
  void add_run(std::size_t block, std::span<const float> run) {
    amax[block] = std::fmax(amax[block], sim::amax(run));
    has_nan[block] = static_cast<std::uint8_t>(has_nan[block] | (contains_nan(run) ? 1 : 0));
  }
  // One element per block (N x 1 blocks): elementwise over the row, which vectorizes. For
  // m >= 0, a > m ? a : m skips a NaN a exactly like fmaxf(m, a).
  void add_row_of_columns(const float* row, std::size_t n) {
    for (std::size_t c = 0; c < n; ++c) {
      const float a = std::fabs(row[c]);
      amax[c] = a > amax[c] ? a : amax[c];
      has_nan[c] = static_cast<std::uint8_t>(has_nan[c] | (row[c] != row[c] ? 1 : 0));
    }
  }
};

// y[c] = RN(x[c] * s) over [c0, c1), s one multiplier (a block's) or one per column; returns how
// many non-zero, non-NaN x gave y == 0.
std::uint64_t scale_run(const float* x, float s, float* y, std::size_t c0, std::size_t c1) {
  std::uint64_t zeros = 0;
  for (std::size_t c = c0; c < c1; ++c) {
    const float p = x[c] * s;
    y[c] = p;
    zeros += static_cast<std::uint64_t>((x[c] != 0.0f) & (x[c] == x[c]) & (p == 0.0f));
  }
  return zeros;
}
std::uint64_t scale_run(const float* x, const float* s, float* y, std::size_t c0, std::size_t c1) {
  std::uint64_t zeros = 0;
  for (std::size_t c = c0; c < c1; ++c) {
    const float p = x[c] * s[c];
    y[c] = p;
    zeros += static_cast<std::uint64_t>((x[c] != 0.0f) & (x[c] == x[c]) & (p == 0.0f));
  }
  return zeros;
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
  QuantizeResult result;
  QuantizedTensor& t = result.tensor;
  t.rows = rows;
  t.cols = cols;
  t.format = format;
  t.block_rows = block.rows;
  t.block_cols = block.cols;
  t.data.resize(x.size());
  const std::int64_t scale_rows = t.scale_rows();
  const auto scale_cols = static_cast<std::size_t>(t.scale_cols());
  const std::size_t scale_count = static_cast<std::size_t>(scale_rows) * scale_cols;
  t.scale_inv.resize(scale_count);
  t.scale.resize(scale_count);
  if (store_e8m0) t.scale_e8m0.resize(scale_count);

  const auto ucols = static_cast<std::size_t>(cols);
  const auto bc = static_cast<std::size_t>(block.cols);
  BandAccumulator band;
  std::vector<float> y(ucols);
  float tensor_amax = 0.0f;
  std::uint64_t zero_products = 0;  // x != 0, not NaN, RN(x * s) == 0

  for (std::int64_t bi = 0; bi < scale_rows; ++bi) {
    const std::int64_t r0 = bi * block.rows;
    const std::int64_t r1 = std::min(rows, r0 + block.rows);
    band.reset(scale_cols);
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = x.data() + static_cast<std::size_t>(r) * ucols;
      if (bc == 1) {
        band.add_row_of_columns(row, ucols);
      } else {
        for (std::size_t j = 0; j < scale_cols; ++j) {
          const std::size_t c0 = j * bc;
          band.add_run(j, std::span<const float>(row + c0, std::min(bc, ucols - c0)));
        }
      }
    }
    const std::size_t first = static_cast<std::size_t>(bi) * scale_cols;
    for (std::size_t j = 0; j < scale_cols; ++j) {
      const BlockScale bs = rule(band.amax[j], band.has_nan[j] != 0);
      t.scale[first + j] = bs.scale;
      t.scale_inv[first + j] = bs.scale_inv;
      if (store_e8m0) t.scale_e8m0[first + j] = bs.e8m0;
      tensor_amax = std::fmax(tensor_amax, band.amax[j]);
    }
    const float* mult = t.scale.data() + first;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = x.data() + static_cast<std::size_t>(r) * ucols;
      for (std::size_t c0 = 0; c0 < ucols; c0 += bc) {
        const std::size_t c1 = std::min(ucols, c0 + bc);
        zero_products += bc == 1 ? scale_run(row, mult, y.data(), 0, ucols)
                                 : scale_run(row, mult[c0 / bc], y.data(), c0, c1);
        if (bc == 1) break;
      }
      const std::span<std::uint8_t> out(t.data.data() + static_cast<std::size_t>(r) * ucols, ucols);
      result.stats.merge(quantize(y, 1.0f, format, Overflow::kSatFinite, out));
    }
  }
  result.stats.amax = tensor_amax;
  result.stats.underflowed += zero_products;
  return result;
}

}  // namespace fp8lab::sim::scaling
