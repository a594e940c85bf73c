#include "experiments/report/markdown_report.hpp"

#include <map>
#include <sstream>

#include "experiments/report/analysis.hpp"
#include "experiments/report/noise_floor.hpp"
#include "experiments/report/recipe_rows.hpp"
#include "experiments/report/run_provenance.hpp"

namespace fp8lab::experiments {
namespace {

// Text from records in a table cell or a list item: Markdown renders raw HTML, which starts with
// '<', so '<' from a sweep's name or a file name is escaped (a <script> stays text; "->" stays).
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else if (c == '<') out += "&lt;";
    else out += c;
  }
  return out;
}

// [`id`](runs/id.json) for each seed's record.
std::string record_links(const ReportInput& input, const RecipeRow& row) {
  std::string text;
  for (const auto* r : row.runs) {
    if (!text.empty()) text += ' ';
    text.append("[`").append((*r)["run_id"].get<std::string>()).append("`](");
    text.append(record_link(input, *r)).append(")");
  }
  return text;
}

}  // namespace

std::string render_markdown_report(const ReportInput& input) {
  std::ostringstream md;
  md << "# fp8lab report\n\n";
  md << "Results from:";
  for (const auto& s : input.sources) md << " `" << s << "`";
  md << "\n\n";

  const NoiseFloors floors(input.records);
  const auto rows = ranked_recipe_rows(input.records, floors);
  const auto ranked = ranked_runs(input.records, floors);
  std::map<std::string, int> verdicts;
  for (const auto& row : rows) ++verdicts[row.verdict];
  md << ranked.size() << " FP8 runs, " << rows.size() << " recipe rows:";
  for (const auto& [v, n] : verdicts) md << ' ' << n << ' ' << v << ';';
  md << ' ' << verdict_rules() << "\n\n";
  for (const auto* floor : floors.all()) {
    md << "- " << floor->workload << ": " << floor->describe() << "\n";
  }
  if (floors.all().empty()) {
    md << "- no baseline record: fixed " << format_percent(kTracksBaselineTolerance)
       << " tolerance used\n";
  }

  md << "\n## Recipes ranked (best first)\n\n";
  md << "| # | recipe | seeds | verdict | final eval loss | \\|vs baseline\\| (median of finished seeds; the verdict's) | weight rel L2 | grad rel L2 | forward SQNR (dB) | gradient SQNR (dB) | runs as | accelerate + TE / torchao | record |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  int rank = 0;
  for (const auto& row : rows) {
    std::string shown = row.verdict_text();
    if (row.runs.size() == 1 && row.verdict == "diverged") {
      shown += " at step " + row.first()["diverged_at_step"].dump();
    }
    const auto mark = upstream_mark(row.first());
    md << "| " << ++rank << " | " << cell(run_label(row.first())) << " | " << row.seeds_text()
       << " | " << shown << " | " << format_number(row.median_at("/final/eval_loss")) << " | "
       << format_percent(row.median_abs_rel_diff) << " | "
       << format_number(row.median_at("/final/weight_rel_l2"), "%.3g") << " | "
       << format_number(row.median_at("/final/grad_rel_l2"), "%.3g") << " | "
       << format_number(row.median_at("/final/forward_sqnr_db"), "%.1f") << " | "
       << format_number(row.median_at("/final/gradient_sqnr_db"), "%.1f") << " | "
       << cell(runs_as_text(row.first())) << " | " << (mark.differs ? "**differs:** " : "")
       << cell(mark.text) << " | " << record_links(input, row) << " |\n";
  }

  md << "\n## Baselines (high-precision Linear, deterministic GEMM)\n\n";
  md << "| run | workload | seed | operands | steps | final train loss | final eval loss | step time (s) | FP32 LibTorch step (s) | record |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : input.records) {
    if (r["kind"] != "baseline") continue;
    md << "| `" << r["run_id"].get<std::string>() << "` | " << r["workload"].get<std::string>()
       << " | " << r.value("seed", 0) << " | " << r.value("high_precision", std::string("?"))
       << " | " << r.value("steps_completed", 0) << " | "
       << format_number(number_at(r, "/final/train_loss")) << " | "
       << format_number(number_at(r, "/final/eval_loss")) << " | "
       << format_number(number_at(r, "/throughput/step_seconds")) << " | "
       << format_number(number_at(r, "/throughput/fp32_step_seconds")) << " | "
       << record_link(input, r) << " |\n";
  }

  bool any_problem = false;
  for (const auto* r : ranked) {
    const auto verdict = run_verdict(*r, floors.of(*r).tolerance);
    if (verdict != "diverged" && verdict != "error" && verdict != "failed to train") continue;
    if (!any_problem) md << "\n## Diverged, failed and untrained runs\n\n";
    any_problem = true;
    md << "- **" << cell(run_label(*r)) << "** seed " << r->value("seed", nlohmann::json(0)).dump()
       << " (`" << (*r)["run_id"].get<std::string>() << "`, " << record_link(input, *r)
       << "): " << verdict;
    if (verdict == "diverged") {
      md << " at step " << (*r)["diverged_at_step"].dump() << ": "
         << cell(r->value("divergence_reason", std::string()));
    } else if (verdict == "error") {
      md << ": " << cell(r->value("error", std::string()));
    } else {
      md << ": eval loss fell " << format_percent(improvement_ratio(*r))
         << " of the baseline's fall; " << underflow_summary(*r);
    }
    md << "\n";
  }

  md << "\n## Throughput (same process: FP8 run, baseline Linear, FP32 LibTorch Linear)\n\n";
  md << "| recipe | seed | run | steps/s | tokens/s | GEMM time share | step / FP32 LibTorch step | step / baseline step |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  for (const auto* r : ranked) {
    md << "| " << cell(run_label(*r)) << " | " << r->value("seed", nlohmann::json(0)).dump()
       << " | `" << (*r)["run_id"].get<std::string>() << "` | "
       << format_number(number_at(*r, "/throughput/steps_per_second")) << " | "
       << format_number(number_at(*r, "/throughput/tokens_per_second"), "%.0f") << " | "
       << format_percent(number_at(*r, "/throughput/gemm_time_share")) << " | "
       << format_number(number_at(*r, "/throughput/step_time_over_fp32"), "%.3g") << "x | "
       << format_number(number_at(*r, "/throughput/step_time_over_baseline"), "%.3g") << "x |\n";
  }
  if (!input.notes.empty()) {
    md << "\n## Notes\n\n";
    for (const auto& n : input.notes) md << "- " << cell(n) << "\n";
  }
  return md.str();
}

}  // namespace fp8lab::experiments
