// gpu::dequantize and its host twin (gpu/dequantize.hpp): one grid-stride loop over the elements,
// each decoded (gpu/cast.cuh's decode, sim::decode_fp8's bits) and multiplied RN by its block's
// scale_inv (gemm_common.cuh's scale_at, the GEMMs' own block lookup).
#include <stdexcept>
#include <string>

#include "gpu/dequantize.hpp"
#include "gpu/gemm/gemm_common.cuh"
#include "gpu/quantize_common.cuh"

namespace fp8lab::gpu {
namespace {

constexpr int kThreads = 256;

// Element i of t: K is taken as the columns, so scale_at's (outer, k) is (row, column).
FP8LAB_HD inline float dequantize_at(const DeviceGemmOperand& t, std::int64_t i) {
  const std::int64_t r = i / t.cols, c = i % t.cols;
  return mul_rn(gemm_detail::decode_any(t.codes[i], t.format), gemm_detail::scale_at(t, r, c));
}

__global__ void __launch_bounds__(kThreads)
    dequantize_kernel(DeviceGemmOperand t, std::int64_t n, float* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = dequantize_at(t, i);
  }
}

// The checks of both entry points; returns rows * cols, and t with K along its columns.
std::int64_t checked(const char* function, DeviceGemmOperand& t, const float* out) {
  detail::check_fp8(t.format, function);
  const std::int64_t n =
      detail::check_blocked_shape(function, t.rows, t.cols, t.block_rows, t.block_cols);
  if (t.codes == nullptr || t.scale_inv == nullptr || out == nullptr) {
    throw std::invalid_argument(std::string(function) +
                                ": t.codes, t.scale_inv and out must be non-null, got null");
  }
  t.k_is_cols = true;
  return n;
}

}  // namespace

void dequantize(const DeviceGemmOperand& tensor, float* out, cudaStream_t stream) {
  DeviceGemmOperand t = tensor;
  const std::int64_t n = checked("gpu::dequantize", t, out);
  dequantize_kernel<<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(t, n, out);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

void host_twin::dequantize(const DeviceGemmOperand& tensor, float* out) {
  DeviceGemmOperand t = tensor;
  const std::int64_t n = checked("host_twin::dequantize", t, out);
  for (std::int64_t i = 0; i < n; ++i) out[i] = dequantize_at(t, i);
}

}  // namespace fp8lab::gpu
