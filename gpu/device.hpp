// Which CUDA device, if any, this process can use. GPU tests and the cuda backend ask here first,
// so that "no GPU" is one clear reason, printed, never a crash or a silent pass.
#pragma once

#include <string>

namespace fp8lab::gpu {

struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not available ("no CUDA device", the driver's error), else empty
  std::string name;    // e.g. "NVIDIA H200"
  int compute_capability = 0;  // 90 for sm_90
  std::string driver_version;
  std::string runtime_version;
};

DeviceInfo query_device();

}  // namespace fp8lab::gpu
