// Shared by the GPU benchmarks: device check (a benchmark without a GPU is skipped with the
// reason, never run), cudaEvent timing for UseManualTime, device properties for peak figures, and
// deterministic pseudo-random inputs made on the device.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"

namespace fp8lab::bench {

// False (and the benchmark marked skipped with the reason) when no CUDA device is usable.
inline bool have_device(benchmark::State& state) {
  static const gpu::DeviceInfo device = gpu::query_device();
  if (!device.available) {
    state.SkipWithError(("no CUDA device: " + device.reason).c_str());
    return false;
  }
  return true;
}

// Seconds one call of f takes on the device, averaged over `reps` back-to-back calls.
template <typename F>
double device_seconds(F&& f, int reps = 1) {
  cudaEvent_t start, stop;
  FP8LAB_CUDA_CHECK(cudaEventCreate(&start));
  FP8LAB_CUDA_CHECK(cudaEventCreate(&stop));
  FP8LAB_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) f();
  FP8LAB_CUDA_CHECK(cudaEventRecord(stop));
  FP8LAB_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return static_cast<double>(ms) * 1e-3 / reps;
}

struct DeviceFigures {
  int sms = 0;
  double clock_hz = 0.0;  // peak SM clock (cudaDevAttrClockRate)
  std::string name;
};

inline DeviceFigures device_figures() {
  int device = 0, sms = 0, clock_khz = 0;
  FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
  FP8LAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  FP8LAB_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  cudaDeviceProp prop{};
  FP8LAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return {sms, clock_khz * 1e3, prop.name};
}

// Element i of a benchmark's input is value(index_hash(i, seed)): the same data in every run.
__device__ inline std::uint32_t index_hash(std::int64_t i, std::uint32_t seed) {
  std::uint32_t h = static_cast<std::uint32_t>(i) * 0x9E3779B9u ^ seed;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  return h;
}

template <typename T, typename Value>
__global__ void fill_hashed_kernel(T* out, std::int64_t n, std::uint32_t seed, Value value) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = value(index_hash(i, seed));
  }
}

template <typename T, typename Value>
void fill_hashed(T* out, std::int64_t n, std::uint32_t seed, Value value) {
  fill_hashed_kernel<<<1024, 256>>>(out, n, seed, value);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::bench
