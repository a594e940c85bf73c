// The Catch2 main of every gpu test program: without a usable CUDA device it prints why and
// exits 77, which CTest reports as skipped (SKIP_RETURN_CODE), never as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "gpu/device.hpp"

int main(int argc, char** argv) {
  const fp8lab::gpu::DeviceInfo device = fp8lab::gpu::query_device();
  if (!device.available) {
    std::printf("SKIPPED: %s (driver %s, runtime %s); this test needs a CUDA device\n",
                device.reason.c_str(), device.driver_version.c_str(),
                device.runtime_version.c_str());
    return 77;
  }
  std::printf("device: %s (sm_%d), driver %s, runtime %s\n", device.name.c_str(),
              device.compute_capability, device.driver_version.c_str(),
              device.runtime_version.c_str());
  return Catch::Session().run(argc, argv);
}
