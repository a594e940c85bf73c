#include "experiments/report/cross_machine.hpp"

#include "experiments/report/report_data.hpp"

namespace fp8lab::experiments {
namespace {

std::string text(const nlohmann::json& machine, const char* key) {
  const auto it = machine.find(key);
  return it != machine.end() && it->is_string() ? it->get<std::string>() : "?";
}

// "AMD EPYC (native: ATen AVX2, MKL AUTO)".
std::string describe(const nlohmann::json& machine) {
  return text(machine, "cpu_model") + " (" + text(machine, "cpu_numerics") + ": ATen " +
         text(machine, "aten_cpu_capability") + ", MKL " + text(machine, "mkl_cbwr") + ")";
}

}  // namespace

bool same_numerics(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object() || !b.is_object()) return true;
  for (const char* key : {"cpu_numerics", "aten_cpu_capability", "mkl_cbwr"}) {
    if (a.value(key, nlohmann::json()) != b.value(key, nlohmann::json())) return false;
  }
  return a.value("cpu_numerics", "") == "portable" ||
         a.value("cpu_model", nlohmann::json()) == b.value("cpu_model", nlohmann::json());
}

std::vector<std::string> cross_machine_notes(const std::vector<nlohmann::json>& records) {
  std::vector<std::string> notes;
  for (const auto& run : records) {
    const auto* baseline = find_baseline(records, run);
    if (baseline == nullptr || !run.contains("machine") || !baseline->contains("machine")) {
      continue;
    }
    const auto& a = run["machine"];
    const auto& b = (*baseline)["machine"];
    if (same_numerics(a, b)) continue;
    notes.push_back("run " + run.value("run_id", std::string("?")) + " ran on " + describe(a) +
                    ", its baseline " + baseline->value("run_id", std::string("?")) + " on " +
                    describe(b) +
                    ": their paired difference holds LibTorch's per-processor rounding as well as "
                    "the recipe's effect; rerun both on one machine, or both with "
                    "FP8LAB_CPU_NUMERICS=portable");
  }
  return notes;
}

}  // namespace fp8lab::experiments
