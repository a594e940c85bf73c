// GPU kernels against sim/ (NUMERICS.md §4), one function per kernel family. Each runs its random
// and adversarial cases (NaN, ±Inf, zeros, denormals, odd shapes, sizes that are not multiples of
// any block or vector width) on the CPU reference and on the GPU and compares every byte, scale,
// history entry and GEMM output bit for bit. Needs a CUDA device (callers check first).
// Used by `fp8lab check` (experiments/cli/check_command.cpp) and by tests/gpu/.
#pragma once

#include <vector>

#include "experiments/gpu_check/check_result.hpp"

namespace fp8lab::experiments::gpu_check {

// gpu::gemm (fp32_seq, hopper split accumulator, hopper fast accum) against sim::gemm for
// per-tensor, rowwise, block 1x128 x 128x128, block 1x128 x 1x128 and MXFP8 operands, in the
// fprop/dgrad/wgrad layouts, fp32 and bf16 outputs, with and without bias. One result per model
// and scaling kind. on_host: run gpu::host_twin::gemm instead (the kernels' per-output code on
// the host; no device needed).
std::vector<CheckResult> check_gemm_models(bool on_host = false);

}  // namespace fp8lab::experiments::gpu_check
