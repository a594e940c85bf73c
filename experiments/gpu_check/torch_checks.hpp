// Peer checks that need LibTorch (only `fp8lab check` runs them; tests/gpu has no LibTorch).
#pragma once

#include <vector>

#include "experiments/gpu_check/check_result.hpp"

namespace fp8lab::experiments::gpu_check {

// torch._scaled_mm (LibTorch's at::_scaled_mm, cuBLASLt underneath on sm_90,
// tensorcore-and-papers.md §2.5) against sim::gemm's hopper model with the matching accumulation
// (use_fast_accum: hopper_fast_accum, else hopper_split_accumulator): tensorwise and rowwise
// scales, fp32 output. Marked peer: bit-exact counts and ULP statistics, never a failure; a
// combination torch rejects is reported as not run, with torch's message.
std::vector<CheckResult> check_torch_scaled_mm_peer();

}  // namespace fp8lab::experiments::gpu_check
