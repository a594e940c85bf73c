// CUDA runtime error checks for host code: a failed call throws std::runtime_error naming the
// call, the error and the source line, so tests and benchmarks fail loudly instead of reading
// garbage from a kernel that never ran.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace fp8lab::gpu {

inline void cuda_check(cudaError_t error, const char* call, const char* file, int line) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                             " failed: " + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ")");
  }
}

}  // namespace fp8lab::gpu

#define FP8LAB_CUDA_CHECK(call) ::fp8lab::gpu::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, execution errors at the next
// synchronizing call.
#define FP8LAB_CUDA_CHECK_LAUNCH() FP8LAB_CUDA_CHECK(cudaGetLastError())
