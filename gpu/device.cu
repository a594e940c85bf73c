#include "gpu/device.hpp"

#include <cuda_runtime.h>

namespace fp8lab::gpu {
namespace {
std::string version_string(int v) {  // CUDA encodes 13.0 as 13000
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

DeviceInfo query_device() {
  DeviceInfo info;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  info.driver_version = driver ? version_string(driver) : "none";
  info.runtime_version = version_string(runtime);
  if (err != cudaSuccess || count == 0) {
    info.reason = err != cudaSuccess
                      ? std::string("no usable CUDA device: ") + cudaGetErrorString(err)
                      : "no CUDA device";
    return info;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  info.available = true;
  info.name = prop.name;
  info.compute_capability = prop.major * 10 + prop.minor;
  return info;
}

}  // namespace fp8lab::gpu
