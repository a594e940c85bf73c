// The output epilogue shared by every GEMM (gemm.hpp): out = RN(total + bias[n]), NaN ->
// 0x7FFFFFFF, then bf16 RN when asked; in parallel over row ranges.
#include <bit>
#include <cmath>

#include "sim/gemm/parallel.hpp"
#include "sim/gemm/plan.hpp"

namespace fp8lab::sim::gemm_detail {

namespace {
constexpr std::int64_t kRowsPerUnit = 64;
}

void finish_output(std::span<float> total, std::int64_t n, std::span<const float> bias,
                   GemmOutputType output, int threads) {
  if (n == 0) return;
  const std::int64_t m = static_cast<std::int64_t>(total.size()) / n;
  const float canonical_nan = std::bit_cast<float>(0x7FFFFFFFu);
  const bool bf16 = output == GemmOutputType::kBf16;
  parallel_units((m + kRowsPerUnit - 1) / kRowsPerUnit, threads, [&](std::int64_t unit) {
    const std::int64_t row_end = std::min(m, (unit + 1) * kRowsPerUnit);
    for (std::int64_t row = unit * kRowsPerUnit; row < row_end; ++row) {
      float* out = total.data() + row * n;
      for (std::int64_t col = 0; col < n; ++col) {
        float v = out[col];
        if (!bias.empty()) v = v + bias[static_cast<std::size_t>(col)];
        if (std::isnan(v)) v = canonical_nan;
        out[col] = bf16 ? rounded_to_bf16(v) : v;
      }
    }
  });
}

}  // namespace fp8lab::sim::gemm_detail
