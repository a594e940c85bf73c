// gpu::host_twin: gemm_detail::hopper_output / fp32_seq_output / high_precision_output on the host
// (gemm.hpp).
#include "gpu/gemm/gemm_common.cuh"

namespace fp8lab::gpu::host_twin {

void gemm(const DeviceGemmOperand& a, const DeviceGemmOperand& b, const DeviceGemmOptions& options,
          float* out) {
  const gemm_detail::Problem p = gemm_detail::resolve(a, b, options, out);
  float value_a[256], value_b[256], power_a[256], power_b[256];
  for (std::uint32_t code = 0; code < 256; ++code) {
    value_a[code] = gemm_detail::decode_any(code, a.format);
    value_b[code] = gemm_detail::decode_any(code, b.format);
    power_a[code] = gemm_detail::exponent_power_any(code, a.format);
    power_b[code] = gemm_detail::exponent_power_any(code, b.format);
  }
  const gemm_detail::CodeTables tables{value_a, value_b, power_a, power_b};
  for (std::int64_t m = 0; m < p.m; ++m) {
    for (std::int64_t n = 0; n < p.n; ++n) {
      out[m * p.n + n] =
          options.model == sim::Accumulation::kFp32Seq
              ? gemm_detail::fp32_seq_output(p, tables, m, n)
              : gemm_detail::hopper_output(
                    p, tables, m, n, options.model == sim::Accumulation::kHopperSplitAccumulator);
    }
  }
}

void high_precision_gemm(const DeviceDenseOperand& a, const DeviceDenseOperand& b,
                         const DenseGemmOptions& options, float* out) {
  const gemm_detail::DenseProblem p = gemm_detail::resolve_dense(a, b, options, out);
  for (std::int64_t m = 0; m < p.m; ++m) {
    for (std::int64_t n = 0; n < p.n; ++n)
      out[m * p.n + n] = gemm_detail::high_precision_output(p, m, n);
  }
}

}  // namespace fp8lab::gpu::host_twin
