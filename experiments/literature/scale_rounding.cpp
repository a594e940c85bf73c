#include "experiments/literature/scale_rounding.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "experiments/literature/table_line.hpp"
#include "sim/cast.hpp"
#include "sim/scaling/mx.hpp"

namespace fp8lab::experiments::literature {
namespace {

using sim::scaling::E8M0Mode;

E8M0Mode mode_of(const std::string& mode) {
  if (mode == "floor") return E8M0Mode::kFloor;
  if (mode == "even") return E8M0Mode::kEven;
  if (mode == "ceil") return E8M0Mode::kCeil;
  if (mode == "rceil") return E8M0Mode::kRceil;
  throw std::invalid_argument("E8M0 scale mode '" + mode + "': expected floor, even, ceil, rceil");
}

constexpr auto kTorchao = sim::scaling::TorchaoVersion::kV0_18;

}  // namespace

const std::vector<std::string>& scale_modes() {
  static const std::vector<std::string> modes = {"floor", "even", "ceil", "rceil"};
  return modes;
}

std::uint8_t scale_code(float amax, const std::string& mode) {
  return sim::scaling::mx_scale_code(amax, sim::Format::E4M3, mode_of(mode), kTorchao);
}

ScaleRoundingRow block_statistics(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                                  const std::string& mode) {
  const auto m = mode_of(mode);
  const auto q = sim::scaling::quantize_mx(x, rows, cols, sim::scaling::ScaleAxis::kRowwise,
                                           sim::Format::E4M3, m, kTorchao);
  const float fp8_max = sim::scaling::fp8_max(sim::Format::E4M3);
  ScaleRoundingRow row;
  row.mode = mode;
  double loss_sum = 0;
  const auto block = sim::scaling::kMxBlockSize;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c0 = 0; c0 < cols; c0 += block) {
      // The block's largest element (first of equals).
      std::int64_t at = c0;
      for (std::int64_t c = c0; c < std::min(cols, c0 + block); ++c) {
        if (std::fabs(x[static_cast<std::size_t>(r * cols + c)]) >
            std::fabs(x[static_cast<std::size_t>(r * cols + at)])) {
          at = c;
        }
      }
      const double amax = std::fabs(x[static_cast<std::size_t>(r * cols + at)]);
      if (!(amax > 0)) continue;
      ++row.blocks;
      const std::size_t scale_index =
          static_cast<std::size_t>(r * q.tensor.scale_cols() + c0 / block);
      const double multiplier = q.tensor.scale[scale_index];
      if (amax * multiplier > fp8_max) ++row.clipped;
      const double restored = std::fabs(
          static_cast<double>(sim::decode_fp8(q.tensor.code_at(r, at), sim::Format::E4M3)) *
          q.tensor.scale_inv_at(r, at));
      const double loss = std::fabs(restored - amax) / amax;
      loss_sum += loss;
      if (loss > row.worst_loss) row.worst_loss = loss;
      if (loss > kHalfStepE4M3) ++row.over_half_step;
    }
  }
  row.mean_loss = row.blocks > 0 ? loss_sum / static_cast<double>(row.blocks) : 0;
  return row;
}

std::vector<ScaleRoundingRow> measure_scale_rounding(const ScaleRoundingOptions& options) {
  std::vector<ScaleRoundingRow> rows;
  for (const auto distribution : all_distributions()) {
    const auto p = make_operands(distribution, options.rows, options.rows, options.k, options.seed);
    for (const auto& mode : scale_modes()) {
      auto row = block_statistics(p.a, p.rows_a, p.k, mode);
      row.distribution = distribution;
      rows.push_back(row);
    }
  }
  return rows;
}

std::string format_scale_rounding_table(const std::vector<ScaleRoundingRow>& rows) {
  using R = ScaleRoundingRow;
  // A count of blocks with its share of the row's blocks.
  const auto share = [](std::int64_t R::*member) {
    return [member](const R& r) {
      const double n = r.blocks > 0 ? static_cast<double>(r.blocks) : 1.0;
      return printed("%7lld (%5.1f%%)", static_cast<long long>(r.*member),
                     100.0 * static_cast<double>(r.*member) / n);
    };
  };
  const auto percent = [](double R::*member) {
    return [member](const R& r) { return printed("%.3f%%", 100 * r.*member); };
  };
  std::string out = text_table<R>(
      {{-16, "inputs", [](const R& r) { return std::string(to_string(r.distribution)); }},
       {-6, "mode", [](const R& r) { return r.mode; }},
       {7, "blocks", [](const R& r) { return printed("%lld", static_cast<long long>(r.blocks)); }},
       {16, "clipped blocks", share(&R::clipped)},
       {16, "blocks > 6.25%", share(&R::over_half_step)},
       {11, "worst loss", percent(&R::worst_loss)},
       {11, "mean loss", percent(&R::mean_loss)}},
      rows);
  out += "torchao issue 2035 vector, amax 150 (E4M3):";
  for (const auto& mode : scale_modes()) {
    out += " " + mode + " " + std::to_string(scale_code(150.0f, mode));
  }
  out += "\n";
  return out;
}

}  // namespace fp8lab::experiments::literature
