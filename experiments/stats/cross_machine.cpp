#include "experiments/stats/cross_machine.hpp"

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

std::string text(const Field<std::string>& field) { return field.value_or("?"); }

// "AMD EPYC (native: ATen AVX2, MKL AUTO)".
std::string describe(const Machine& machine) {
  return text(machine.cpu_model) + " (" + text(machine.cpu_numerics) + ": ATen " +
         text(machine.aten_cpu_capability) + ", MKL " + text(machine.mkl_cbwr) + ")";
}

// Two fields of two records alike: the same value, or neither has one.
bool alike(const Field<std::string>& a, const Field<std::string>& b) { return a.get() == b.get(); }

}  // namespace

bool same_numerics(const Machine& a, const Machine& b) {
  if (!alike(a.cpu_numerics, b.cpu_numerics) ||
      !alike(a.aten_cpu_capability, b.aten_cpu_capability) || !alike(a.mkl_cbwr, b.mkl_cbwr)) {
    return false;
  }
  return *a.cpu_numerics == "portable" || alike(a.cpu_model, b.cpu_model);
}

std::vector<std::string> cross_machine_notes(const std::vector<RunRecord>& records) {
  std::vector<std::string> notes;
  for (const auto& run : records) {
    const auto* baseline = find_baseline(records, run);
    if (baseline == nullptr || !run.machine.has_value() || !baseline->machine.has_value()) {
      continue;
    }
    const auto& a = *run.machine;
    const auto& b = *baseline->machine;
    if (same_numerics(a, b)) continue;
    notes.push_back("run " + run.run_id + " ran on " + describe(a) + ", its baseline " +
                    baseline->run_id + " on " + describe(b) +
                    ": their paired difference holds LibTorch's per-processor rounding as well as "
                    "the recipe's effect; rerun both on one machine, or both with "
                    "FP8LAB_CPU_NUMERICS=portable");
  }
  return notes;
}

}  // namespace fp8lab::experiments
