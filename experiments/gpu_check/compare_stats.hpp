// A quantizer's statistics, sim's against the kernel's: amax bit for bit and every count equal,
// each mismatch named with both values. The quantize and the scaling checks both compare them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "experiments/gpu_check/check_result.hpp"
#include "gpu/quantize.hpp"
#include "sim/quantize.hpp"

namespace fp8lab::experiments::gpu_check {

inline void compare_stats(CheckResult& r, const std::string& where, const sim::QuantizeStats& e,
                          const gpu::DeviceQuantizeStats& a) {
  compare_float(r, where + " stats.amax", e.amax, a.amax);
  const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> counts[] = {
      {"count", {e.count, a.count}},
      {"saturated", {e.saturated, a.saturated}},
      {"underflowed", {e.underflowed, a.underflowed}},
      {"nan", {e.nan, a.nan}}};
  for (const auto& [name, v] : counts) {
    ++r.compared;
    if (v.first != v.second) {
      r.add_mismatch(where + " stats." + name + ": sim " + std::to_string(v.first) + ", gpu " +
                         std::to_string(v.second),
                     0);
    }
  }
}

}  // namespace fp8lab::experiments::gpu_check
