// The output epilogue shared by every GEMM (gemm.hpp): out = RN(total + bias[n]), NaN ->
// 0x7FFFFFFF, then bf16 RN when asked. The tile loop applies it to each tile row as it copies the
// row into C (finish_values); finish_output does the same over a whole C, in parallel over row
// ranges, for the exact model.
#include <bit>
#include <cmath>

#include "sim/gemm/plan.hpp"
#include "sim/parallel.hpp"

namespace fp8lab::sim::gemm_detail {

namespace {
constexpr std::int64_t kRowsPerUnit = 64;
}

void finish_values(const float* total, const float* bias, GemmOutputType output, std::int64_t count,
                   float* out) {
  const float canonical_nan = std::bit_cast<float>(0x7FFFFFFFu);
  // One loop per case without branches on the element, so that the compiler vectorizes it (the
  // common case, no bias and fp32 output, is a copy that replaces NaN).
  if (output == GemmOutputType::kFp32) {
    if (bias == nullptr) {
      for (std::int64_t i = 0; i < count; ++i) {
        const float v = total[i];
        out[i] = v != v ? canonical_nan : v;
      }
    } else {
      for (std::int64_t i = 0; i < count; ++i) {
        const float v = total[i] + bias[i];
        out[i] = v != v ? canonical_nan : v;
      }
    }
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = bias == nullptr ? total[i] : total[i] + bias[i];
    out[i] = rounded_to_bf16(v != v ? canonical_nan : v);
  }
}

void finish_output(std::span<float> total, std::int64_t n, std::span<const float> bias,
                   GemmOutputType output, int threads) {
  if (n == 0) return;
  const std::int64_t m = static_cast<std::int64_t>(total.size()) / n;
  parallel_units((m + kRowsPerUnit - 1) / kRowsPerUnit, threads, [&](std::int64_t unit) {
    const std::int64_t row_end = std::min(m, (unit + 1) * kRowsPerUnit);
    for (std::int64_t row = unit * kRowsPerUnit; row < row_end; ++row) {
      float* out = total.data() + row * n;
      finish_values(out, bias.empty() ? nullptr : bias.data(), output, n, out);
    }
  });
}

}  // namespace fp8lab::sim::gemm_detail
