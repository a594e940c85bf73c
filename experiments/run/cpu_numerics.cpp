#include "experiments/run/cpu_numerics.hpp"

#include <ATen/Version.h>

#include <cstdlib>
#include <fstream>
#include <string_view>

#include "experiments/run/portable_kernels.hpp"
#include "sim/quantize.hpp"

namespace fp8lab::experiments {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Sets `name` to `wanted` unless it already holds it; a different value set by the user is an
// error, so that a record never claims a pin the process did not run with.
std::string pin(const char* name, const char* wanted) {
  const auto now = environment(name);
  if (now.empty()) {
    ::setenv(name, wanted, 1);
    return "";
  }
  if (now == wanted) return "";
  return std::string(kCpuNumericsVariable) + "=portable needs " + name + "=" + wanted +
         ", but the environment sets " + name + "=" + now + ": unset it or use " +
         kCpuNumericsVariable + "=native";
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "unknown";
}

}  // namespace

std::string pin_cpu_numerics_from_environment() {
  const auto mode = environment(kCpuNumericsVariable);
  if (mode.empty() || mode == "native") return "";
  if (mode != "portable") {
    return std::string(kCpuNumericsVariable) + "=" + mode +
           " is not a CPU numerics mode: accepted are native (the default) and portable";
  }
  auto error = pin("ATEN_CPU_CAPABILITY", "default");
  if (error.empty()) error = pin("MKL_CBWR", "COMPATIBLE");
  // What the pins do not reach: MKL's vector math and oneDNN (portable_kernels.hpp).
  if (error.empty()) use_portable_kernels();
  return error;
}

Machine machine_facts() {
  const auto mode = environment(kCpuNumericsVariable);
  const auto mkl = environment("MKL_CBWR");
  Machine machine;
  machine.cpu_model = cpu_model();
  machine.cpu_numerics = mode.empty() ? std::string("native") : mode;
  machine.aten_cpu_capability = std::string(at::get_cpu_capability());
  machine.mkl_cbwr = mkl.empty() ? std::string("AUTO") : mkl;
  machine.sim_simd_target = std::string(sim::bulk_target_name());
  return machine;
}

}  // namespace fp8lab::experiments
