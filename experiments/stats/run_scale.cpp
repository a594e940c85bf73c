#include "experiments/stats/run_scale.hpp"

#include <map>
#include <optional>

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

namespace {

// "GEMM K: fprop 64, 256; dgrad 64, 256; wgrad 512", from the first FP8 record of the workload
// that has `gemm_k` (every FP8 run of a workload has the same Linears and batch).
std::string gemm_k_text(const std::vector<RunRecord>& records, const std::string& workload) {
  for (const auto& r : records) {
    if (r.workload != workload || !r.gemm_k.has_value()) continue;
    std::string text = "GEMM K:";
    const char* separator = " ";
    for (const char* gemm : {"fprop", "dgrad", "wgrad"}) {
      const auto it = r.gemm_k->find(gemm);
      if (it == r.gemm_k->end() || it->second.empty()) continue;
      const auto& values = it->second;
      text += separator;
      text += gemm;
      for (std::size_t i = 0; i < values.size(); ++i) {
        text += i == 0 ? " " : ", ";
        text += format_number(static_cast<double>(values[i]), "%.0f");
      }
      separator = "; ";
    }
    return text;
  }
  return "GEMM K values: not in the run records (records before gemm_k)";
}

}  // namespace

std::vector<std::string> run_scale_lines(const std::vector<RunRecord>& records) {
  std::map<std::string, const RunRecord*> chosen;  // workload -> record
  for (const auto& r : records) {
    if (*r.status != "finished") continue;
    const auto& workload = r.workload;
    const auto it = chosen.find(workload);
    const bool baseline = r.kind == "baseline";
    if (it == chosen.end() || (baseline && it->second->kind != "baseline")) {
      chosen[workload] = &r;
    }
  }
  std::vector<std::string> lines;
  for (const auto& [workload, r] : chosen) {
    // As numbers (the arithmetic below is in double).
    const auto number = [](const Field<std::int64_t>& f) -> std::optional<double> {
      if (!f.has_value()) return std::nullopt;
      return static_cast<double>(*f);
    };
    const auto steps = number(r->steps_completed);
    const auto per_step = number(r->throughput->tokens_per_step);
    const auto all = number(r->parameter_count);
    const auto non_embedding = number(r->non_embedding_parameter_count);
    std::string line = workload + ": " + format_number(steps, "%.0f") + " steps";
    if (steps && per_step) {
      const double tokens = *steps * *per_step;
      line += " x " + format_number(per_step, "%.0f") +
              " tokens = " + format_number(tokens, "%.3g") + " tokens";
      if (all && *all > 0) {
        line += "; " + format_number(tokens / *all, "%.3g") + " tokens per parameter (" +
                format_number(all, "%.3g") + " parameters)";
      }
      if (non_embedding && *non_embedding > 0 && non_embedding != all) {
        line += ", " + format_number(tokens / *non_embedding, "%.3g") +
                " per non-embedding parameter (" + format_number(non_embedding, "%.3g") + ")";
      }
    } else {
      line += "; tokens per step not recorded";
    }
    lines.push_back(line + "; " + gemm_k_text(records, workload));
  }
  return lines;
}

}  // namespace fp8lab::experiments
