// The high-precision GEMM (gemm.hpp): fp32 or bf16-rounded operands, acc = RN(acc + RN(a * b))
// in increasing k, through the fp32_seq tile loop with one block of unit scales (RN(P * 1) = P).
#include "sim/gemm/gemm.hpp"
#include "sim/gemm/plan.hpp"
#include "sim/gemm/tile_loop.hpp"

namespace fp8lab::sim {

void high_precision_gemm_into(const DenseOperand& a, const DenseOperand& b,
                              const HighPrecisionGemmOptions& options, std::span<float> out) {
  const auto plan =
      gemm_detail::make_dense_plan(a, b, options.round_operands_to_bf16, options.threads);
  gemm_detail::check_output(plan.shape, options.bias, out.size());
  gemm_detail::for_each_tile(plan, options.threads, out.data(), options.bias, options.output,
                             gemm_detail::fp32_mul_add_tile);
}

std::vector<float> high_precision_gemm(const DenseOperand& a, const DenseOperand& b,
                                       const HighPrecisionGemmOptions& options) {
  const GemmShape shape = gemm_detail::dense_gemm_shape(a, b);  // M * N checked
  std::vector<float> out(static_cast<std::size_t>(shape.m * shape.n));
  high_precision_gemm_into(a, b, options, out);
  return out;
}

}  // namespace fp8lab::sim
