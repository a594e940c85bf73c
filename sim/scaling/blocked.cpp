#include "sim/scaling/blocked.hpp"

#include "sim/quantize_scaled.hpp"
#include "sim/scaling/subbyte_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8lab::sim::scaling {
namespace {

// The walk: bands of block.rows rows. Pass 1 sweeps the band row by row (contiguous, so N x 1
// blocks cost the same as 1 x N) and accumulates each block's amax and whether it holds a NaN
// (run_amax: all whole blocks of a row in one vectorized call). The rule turns them into scales.
// Pass 2 quantizes the band's rows with its blocks' scales in one call (quantize_scaled_rows:
// quantize_scaled row by row, the scales checked once), which gives
// the codes and statistics of quantize(x_block, s_block) block by block; the amax is the
// tensor's, from pass 1.
struct BandAccumulator {
  std::vector<float> amax;            // per block of the band, NaN ignored (as fmaxf)
  std::vector<std::uint8_t> has_nan;  // per block of the band

  void reset(std::size_t blocks) {
    amax.assign(blocks, 0.0f);
    has_nan.assign(blocks, 0);
  }
  // One contiguous run of a block (sim::amax is the vectorized fmaxf reduction).
  void add_run(std::size_t block, std::span<const float> run) {
    add(block, sim::amax(run), contains_nan(run));
  }
  // Both amaxes ignore NaN (>= +0, never NaN), so the comparison is fmaxf without its call.
  void add(std::size_t block, float run_amax, bool run_has_nan) {
    amax[block] = run_amax > amax[block] ? run_amax : amax[block];
    has_nan[block] = static_cast<std::uint8_t>(has_nan[block] | (run_has_nan ? 1 : 0));
  }
  // A row of 1 x block_cols runs: the whole runs in one call when run_amax takes them.
  void add_row_of_runs(const float* row, std::size_t n, std::size_t block_cols) {
    const std::size_t blocks = amax.size();
    run_amax_.resize(blocks);
    run_nan_.resize(blocks);
    const std::size_t done =
        run_amax(std::span<const float>(row, n), block_cols, run_amax_, run_nan_);
    for (std::size_t j = 0; j < done; ++j) add(j, run_amax_[j], run_nan_[j] != 0);
    for (std::size_t j = done; j < blocks; ++j) {
      const std::size_t c0 = j * block_cols;
      add_run(j, std::span<const float>(row + c0, std::min(block_cols, n - c0)));
    }
  }
  // One element per block (N x 1 blocks): elementwise over the row (column_amax, vectorized).
  // For m >= 0, a > m ? a : m skips a NaN a exactly like fmaxf(m, a).
  void add_row_of_columns(const float* row, std::size_t n) {
    const std::size_t done = column_amax(std::span<const float>(row, n), amax, has_nan);
    for (std::size_t c = done; c < n; ++c) {
      const float a = std::fabs(row[c]);
      amax[c] = a > amax[c] ? a : amax[c];
      has_nan[c] = static_cast<std::uint8_t>(has_nan[c] | (row[c] != row[c] ? 1 : 0));
    }
  }

 private:
  std::vector<float> run_amax_;
  std::vector<std::uint8_t> run_nan_;
};

}  // namespace

QuantizeResult quantize_blocked(const char* function, std::span<const float> x, std::int64_t rows,
                                std::int64_t cols, BlockShape block, Format format, bool store_e8m0,
                                const BlockScaleRowRule& rule, SubbyteSpecials subbyte) {
  check_tensor_arguments(function, x.size(), rows, cols, format, /*subbyte_allowed=*/true);
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
  float tensor_amax = 0.0f;

  for (std::int64_t bi = 0; bi < scale_rows; ++bi) {
    const std::int64_t r0 = bi * block.rows;
    const std::int64_t r1 = std::min(rows, r0 + block.rows);
    band.reset(scale_cols);
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = x.data() + static_cast<std::size_t>(r) * ucols;
      if (bc == 1) {
        band.add_row_of_columns(row, ucols);
      } else {
        band.add_row_of_runs(row, ucols, bc);
      }
    }
    const std::size_t first = static_cast<std::size_t>(bi) * scale_cols;
    rule(band.amax, band.has_nan,
         BlockScaleRow{std::span<float>(t.scale).subspan(first, scale_cols),
                       std::span<float>(t.scale_inv).subspan(first, scale_cols),
                       store_e8m0 ? std::span<std::uint8_t>(t.scale_e8m0).subspan(first, scale_cols)
                                  : std::span<std::uint8_t>()});
    for (const float a : band.amax) tensor_amax = a > tensor_amax ? a : tensor_amax;  // as add()
    const std::span<const float> band_scales(t.scale.data() + first, scale_cols);
    const std::size_t offset = static_cast<std::size_t>(r0) * ucols;
    const std::size_t band_size = static_cast<std::size_t>(r1 - r0) * ucols;
    const auto band_out = std::span<std::uint8_t>(t.data).subspan(offset, band_size);
    const auto band_x = x.subspan(offset, band_size);
    result.stats.merge(is_subbyte(format)
                           ? subbyte_detail::subbyte_rows_lanes(band_x.data(), band_x.size(), ucols,
                                                                band_scales.data(), bc, format,
                                                                subbyte, band_out.data())
                           : quantize_scaled_rows(band_x, ucols, band_scales, bc, format,
                                                  Overflow::kSatFinite, band_out));
  }
  result.stats.amax = tensor_amax;
  return result;
}

QuantizeResult quantize_blocked(const char* function, std::span<const float> x, std::int64_t rows,
                                std::int64_t cols, BlockShape block, Format format, bool store_e8m0,
                                const BlockScaleRule& rule, SubbyteSpecials subbyte) {
  return quantize_blocked(
      function, x, rows, cols, block, format, store_e8m0,
      [&rule](std::span<const float> amax, std::span<const std::uint8_t> has_nan,
              BlockScaleRow out) {
        for (std::size_t j = 0; j < amax.size(); ++j) {
          const BlockScale bs = rule(amax[j], has_nan[j] != 0);
          out.scale[j] = bs.scale;
          out.scale_inv[j] = bs.scale_inv;
          if (!out.e8m0.empty()) out.e8m0[j] = bs.e8m0;
        }
      },
      subbyte);
}

}  // namespace fp8lab::sim::scaling
