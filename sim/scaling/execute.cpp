// The executor of a plan, on one thread or on several (bands of whole block rows, or per-tensor
// chunks), always with the one-thread bits.
#include "sim/scaling/execute.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/parallel.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/mx_dither.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::sim::scaling {
namespace {

// A kMx plan with Tseng et al.'s parts (plan.hpp): the 64-point RHT along K with the call's
// signs, then their 'dither_scale' rounding, or the plan's MX rule (round to nearest).
QuantizeResult run_mx_tseng(const QuantizePlan& p, std::span<const float> x, std::int64_t rows,
                            std::int64_t cols, const StochasticStream* stochastic,
                            std::uint64_t rht_signs) {
  if (p.stochastic_rounding && (stochastic == nullptr || p.format != Format::E2M1)) {
    throw std::invalid_argument(
        "sim::scaling::quantize: an mx plan with stochastic_rounding needs E2M1 elements and a "
        "Philox stream");
  }
  if (p.block.rows > 1 && p.block.cols > 1) {
    throw std::invalid_argument("sim::scaling::quantize: an mx plan with rht or "
                                "stochastic_rounding takes 1 x 32 or 32 x 1 blocks, not 2-D tiles");
  }
  std::vector<float> transformed;
  std::span<const float> source = x;
  if (p.rht) {
    check_tensor_arguments("sim::scaling::quantize (mx rht)", x.size(), rows, cols, p.format, true);
    transformed.resize(x.size());
    mx_rht_bf16(x, rows, cols, p.axis, rht_signs, transformed);
    source = transformed;
  }
  QuantizeResult result =
      p.stochastic_rounding
          ? quantize_mx_dither_scale(source, rows, cols, p.axis, *stochastic)
          : quantize_mx(source, rows, cols, p.axis, p.format, p.mx_mode, p.torchao);
  result.tensor.rht = p.rht;
  result.tensor.rht_signs = p.rht ? rht_signs : 0;
  return result;
}

// The plan's quantizer; per-tensor kinds on `threads` (current.hpp), the others on the calling
// thread.
QuantizeResult run_plan(const QuantizePlan& p, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads,
                        const StochasticStream* stochastic = nullptr, std::uint64_t rht_signs = 0) {
  switch (p.kind) {
    case QuantizeKind::kCurrentTe:
      return quantize_current_te(x, rows, cols, p.format, p.pow2, /*eps=*/0.0f, {}, threads);
    case QuantizeKind::kTensorwiseTorchao:
      return quantize_tensorwise_torchao(x, rows, cols, p.format, p.pow2, {}, threads);
    case QuantizeKind::kAxiswiseTorchao:
      return quantize_axiswise_torchao(x, rows, cols, p.axis, p.format, p.pow2);
    case QuantizeKind::kBlockTe: {
      BlockScalingConfig config;
      config.block = p.block;
      config.pow2 = p.pow2;
      return quantize_block_te(x, rows, cols, p.format, config);
    }
    case QuantizeKind::kMx:
      if (p.rht || p.stochastic_rounding)
        return run_mx_tseng(p, x, rows, cols, stochastic, rht_signs);
      if (p.block == BlockShape{kMxBlockSize, kMxBlockSize}) {
        return quantize_mx_2d(x, rows, cols, p.format, p.mx_mode, p.torchao);
      }
      return quantize_mx(x, rows, cols, p.axis, p.format, p.mx_mode, p.torchao);
    case QuantizeKind::kNvfp4: {
      if (p.stochastic_rounding && stochastic == nullptr) {
        throw std::invalid_argument(
            "sim::scaling::quantize: an nvfp4 plan with stochastic_rounding needs a Philox stream");
      }
      const StochasticStream* sr = p.stochastic_rounding ? stochastic : nullptr;
      if (!p.rht) return quantize_nvfp4(x, rows, cols, p.block, p.nvfp4_mode, sr);
      check_tensor_arguments("sim::scaling::quantize (rht)", x.size(), rows, cols, p.format, true);
      std::vector<float> transformed(x.size());
      random_hadamard_transform_bf16(x, rows, cols, RhtAxis::kRows, kTeRhtSignMask, transformed);
      QuantizeResult result = quantize_nvfp4(transformed, rows, cols, p.block, p.nvfp4_mode, sr);
      result.tensor.rht = true;
      return result;
    }
    case QuantizeKind::kStatic:
      return quantize_per_tensor("sim::scaling::quantize (static)", x, rows, cols, p.format,
                                 p.static_scale, threads);
    case QuantizeKind::kDelayed:
    case QuantizeKind::kHighPrecision: break;
  }
  throw std::invalid_argument(std::string("sim::scaling::quantize: a ") + to_string(p.kind) +
                              " plan has no stateless quantizer");
}

// Bands per thread: more bands than threads even out bands that cost more (NaN, saturation).
constexpr std::int64_t kBandsPerThread = 4;

// Appends `part` (the band below what `whole` holds) to `whole`: codes and each scale vector
// are row-major with whole block rows per band, so the band's follow the tensor's so far.
void append_band(QuantizeResult& whole, const QuantizeResult& part) {
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(whole.tensor.data, part.tensor.data);
  append(whole.tensor.scale_inv, part.tensor.scale_inv);
  append(whole.tensor.scale_e8m0, part.tensor.scale_e8m0);
  append(whole.tensor.scale, part.tensor.scale);
  whole.tensor.rows += part.tensor.rows;
  whole.stats.merge(part.stats);
}

}  // namespace

QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols) {
  return run_plan(plan, x, rows, cols, 1);
}

QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads, const StochasticStream* stochastic) {
  return quantize(plan, x, rows, cols, threads, stochastic, 0);
}

QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads, const StochasticStream* stochastic,
                        std::uint64_t rht_signs) {
  const bool whole = plan.kind == QuantizeKind::kNvfp4 ||
                     (plan.kind == QuantizeKind::kMx && (plan.rht || plan.stochastic_rounding));
  if (whole) return run_plan(plan, x, rows, cols, 1, stochastic, rht_signs);
  return quantize(plan, x, rows, cols, threads);
}

QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads) {
  const std::int64_t block_rows = plan.block.rows;
  // NVFP4's per-tensor scale needs the whole tensor's amax: it runs on the calling thread.
  const bool banded = plan.kind != QuantizeKind::kDelayed &&
                      plan.kind != QuantizeKind::kHighPrecision &&
                      plan.kind != QuantizeKind::kNvfp4 && !plan.rht && !plan.stochastic_rounding &&
                      block_rows >= 1;
  if (threads <= 1 || !banded || rows <= block_rows || cols < 1 ||
      x.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)) {
    return run_plan(plan, x, rows, cols, threads);  // which also refuses bad arguments
  }
  const std::int64_t block_count = (rows + block_rows - 1) / block_rows;
  const std::int64_t bands = std::min(block_count, threads * kBandsPerThread);
  const std::int64_t blocks_per_band = (block_count + bands - 1) / bands;
  const std::int64_t band_rows = blocks_per_band * block_rows;
  const std::int64_t band_count = (rows + band_rows - 1) / band_rows;
  std::vector<QuantizeResult> parts(static_cast<std::size_t>(band_count));
  parallel_units(band_count, threads, [&](std::int64_t b) {
    const std::int64_t r0 = b * band_rows, r1 = std::min(rows, r0 + band_rows);
    const auto offset = static_cast<std::size_t>(r0) * static_cast<std::size_t>(cols);
    parts[static_cast<std::size_t>(b)] = run_plan(
        plan, x.subspan(offset, static_cast<std::size_t>((r1 - r0) * cols)), r1 - r0, cols, 1);
  });
  QuantizeResult result;
  result.tensor = std::move(parts[0].tensor);
  result.stats = parts[0].stats;
  result.tensor.data.reserve(x.size());
  const auto scales = result.tensor.scale.size() * static_cast<std::size_t>(band_count);
  for (auto* v : {&result.tensor.scale_inv, &result.tensor.scale}) v->reserve(scales);
  if (plan.stores_e8m0()) result.tensor.scale_e8m0.reserve(scales);
  for (std::size_t b = 1; b < parts.size(); ++b) append_band(result, parts[b]);
  return result;
}

}  // namespace fp8lab::sim::scaling
