// Shared by the GPU benchmarks: device check (a benchmark without a GPU is skipped with the
// reason, never run), cudaEvent timing for UseManualTime, device properties for peak figures.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

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

}  // namespace fp8lab::bench
