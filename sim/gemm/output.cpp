// The output epilogue shared by every GEMM (gemm.hpp): out = RN(total + bias[n]), NaN ->
// 0x7FFFFFFF, then bf16 RN when asked. The tile loop applies it to each tile's rows as it copies
// them into C (finish_rows); finish_output does the same over a whole C, in parallel over row
// ranges, for the exact model.
#include <bit>
#include <cmath>

#include "sim/gemm/plan.hpp"
#include "sim/parallel.hpp"

// One output before the bf16 rounding, for the scalar loops of every target pass below (hence the
// guard: foreach_target includes this file once per target): with no bias, total passes unchanged
// (total + 0 would turn -0 into +0), and NaN becomes 0x7FFFFFFF.
#ifndef FP8LAB_SIM_GEMM_OUTPUT_VALUE
#define FP8LAB_SIM_GEMM_OUTPUT_VALUE
namespace fp8lab::sim::gemm_detail {
inline float finished_value(const float* total, const float* bias, std::int64_t i) {
  const float v = bias == nullptr ? total[i] : total[i] + bias[i];
  return v != v ? std::bit_cast<float>(0x7FFFFFFFu) : v;
}
}  // namespace fp8lab::sim::gemm_detail
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/gemm/output.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/gemm/tile_frame.hpp"

FP8LAB_GEMM_TILES_BEGIN;

// The fp32 epilogue in the target's widest vectors (two AVX-512 vectors per 32-column tile row
// against eight SSE2 ones in the baseline build), the row loop inside one call per tile: the
// per-row call and the 4-lane loop were about 3 ms of the llama-xs FP8 step at load 2.5. Each
// lane computes finished_value's result: an IEEE add without contraction, no add without a bias.
void FinishRowsFp32(const float* total, std::int64_t total_stride, const float* bias,
                    std::int64_t rows, std::int64_t cols, float* out, std::int64_t out_stride) {
  const hn::ScalableTag<float> d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto nan = hn::Set(d, std::bit_cast<float>(0x7FFFFFFFu));
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* t = total + r * total_stride;
    float* o = out + r * out_stride;
    std::int64_t i = 0;
    for (; i + lanes <= cols; i += lanes) {
      auto v = hn::LoadU(d, t + i);
      if (bias != nullptr) v = hn::Add(v, hn::LoadU(d, bias + i));
      hn::StoreU(hn::IfThenElse(hn::Eq(v, v), v, nan), d, o + i);
    }
    for (; i < cols; ++i) o[i] = finished_value(t, bias, i);
  }
}

FP8LAB_GEMM_TILES_END;

#if HWY_ONCE
namespace fp8lab::sim::gemm_detail {

HWY_EXPORT(FinishRowsFp32);

namespace {
constexpr std::int64_t kRowsPerUnit = 64;
}  // namespace

void finish_rows(const float* total, std::int64_t total_stride, const float* bias,
                 GemmOutputType output, std::int64_t rows, std::int64_t cols, float* out,
                 std::int64_t out_stride) {
  if (output == GemmOutputType::kFp32) {
    HWY_DYNAMIC_DISPATCH(FinishRowsFp32)(total, total_stride, bias, rows, cols, out, out_stride);
    return;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* t = total + r * total_stride;
    float* o = out + r * out_stride;
    for (std::int64_t i = 0; i < cols; ++i) o[i] = rounded_to_bf16(finished_value(t, bias, i));
  }
}

void finish_output(std::span<float> total, std::int64_t n, std::span<const float> bias,
                   GemmOutputType output, int threads) {
  if (n == 0) return;
  const std::int64_t m = static_cast<std::int64_t>(total.size()) / n;
  parallel_units((m + kRowsPerUnit - 1) / kRowsPerUnit, threads, [&](std::int64_t unit) {
    const std::int64_t row0 = unit * kRowsPerUnit, rows = std::min(m, row0 + kRowsPerUnit) - row0;
    float* out = total.data() + row0 * n;
    finish_rows(out, n, bias.empty() ? nullptr : bias.data(), output, rows, n, out, n);
  });
}

}  // namespace fp8lab::sim::gemm_detail
#endif  // HWY_ONCE
