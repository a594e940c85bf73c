// The GEMM kernel launchers behind gpu::gemm (one .cu each).
#pragma once

#include <cuda_runtime.h>

namespace fp8lab::gpu::gemm_detail {

struct Problem;
struct DenseProblem;
void launch_fp32_seq(const Problem& p, cudaStream_t stream);                        // fp32_seq.cu
void launch_high_precision(const DenseProblem& p, cudaStream_t stream);             // fp32_seq.cu
void launch_hopper(const Problem& p, bool split_accumulator, cudaStream_t stream);  // hopper.cu

}  // namespace fp8lab::gpu::gemm_detail
