#include "experiments/report/markdown_report.hpp"
#include "experiments/report/incomplete_sweep.hpp"

#include <map>
#include <sstream>

#include "experiments/report/ablation.hpp"
#include "experiments/report/analysis.hpp"
#include "experiments/report/first_non_finite.hpp"
#include "experiments/report/layer_stats_report.hpp"
#include "experiments/report/literature_effects.hpp"
#include "experiments/report/noise_floor.hpp"
#include "experiments/report/recipe_rows.hpp"
#include "experiments/report/report_facts.hpp"
#include "experiments/report/report_tables.hpp"
#include "experiments/report/run_provenance.hpp"

namespace fp8lab::experiments {
namespace {

// Text from records in a table cell or a list item: Markdown renders raw HTML, which starts with
// '<', so '<' from a sweep's name or a file name is escaped (a <script> stays text; "->" stays).
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else if (c == '<')
      out += "&lt;";
    else
      out += c;
  }
  return out;
}

// The head: what was read, the verdict counts, the rules, and the floors each verdict stands
// beside (the unpaired noise floor as context, the chaos floor of the null runs).
void summary(std::ostringstream& md, const ReportInput& input, const ReportFacts& facts) {
  md << "# fp8lab report\n\n";
  if (const auto incomplete = incomplete_text(input.requested, input.records);
      !incomplete.empty()) {
    md << "> **" << incomplete << "**\n\n";
  }
  md << "Results from:";
  for (const auto& s : input.sources) md << " `" << s << "`";
  md << "\n\n";
  std::map<std::string, int> verdicts;
  for (const auto& row : facts.rows) ++verdicts[row.verdict];
  md << facts.ranked.size() << " FP8 runs, " << facts.rows.size() << " recipe rows:";
  for (const auto& [v, n] : verdicts) md << ' ' << n << ' ' << v << ';';
  md << ' ' << paired_verdict_rules() << "\n\n";
  md << "Scale of the runs:\n\n";
  for (const auto& line : facts.scale) md << "- " << cell(line) << "\n";
  md << "\nThe tests:\n\n";
  for (const auto& line : facts.legend) md << "- " << cell(line) << "\n";
  md << "\n" << cell(facts.families) << "\n\n";
  for (const auto* floor : facts.chaos.all()) {
    md << "- " << floor->workload << ": chaos floor (null runs, paired tail error) "
       << floor->describe() << "\n";
  }
  if (facts.chaos.all().empty()) {
    md << "- chaos floor: not measured, no null runs (the sweep key `null_runs: true` runs "
          "them)\n";
  }
  for (const auto* floor : facts.floors.all()) {
    md << "- " << floor->workload << " (context, not the verdict rule): " << floor->describe()
       << "\n";
  }
  if (facts.floors.all().empty()) {
    md << "- no baseline record: fixed " << format_percent(kTracksBaselineTolerance)
       << " tolerance used\n";
  }
}

// A report table (report_tables.hpp) as a pipe table: the detail of a flagged cell becomes a
// numbered footnote below it, a flagged cell is bold.
void table_markdown(std::ostringstream& md, const ReportTable& table) {
  md << "\n## " << table.title << "\n\n";
  if (table.rows.empty() && !table.empty.empty()) {
    md << table.empty << "\n";
    return;
  }
  md << cell(table.note) << "\n\n|";
  for (const auto& column : table.columns) md << ' ' << cell(column) << " |";
  md << "\n|";
  for (std::size_t i = 0; i < table.columns.size(); ++i) md << "---|";
  md << '\n';
  std::vector<std::string> footnotes;
  for (const auto& row : table.rows) {
    md << '|';
    for (const auto& c : row) {
      std::string shown = c.code && !c.text.empty() ? "`" + c.text + "`" : cell(c.text);
      for (const auto& [text, href] : c.links) {
        shown += (shown.empty() ? "" : " ") + std::string("[`") + text + "`](" + href + ")";
      }
      if (c.flagged) {
        footnotes.push_back(c.detail);
        shown = "**" + shown + "** [" + std::to_string(footnotes.size()) + "]";
      }
      md << ' ' << shown << " |";
    }
    md << '\n';
  }
  if (!footnotes.empty()) md << "\n";
  for (std::size_t i = 0; i < footnotes.size(); ++i) {
    md << "[" << i + 1 << "] " << cell(footnotes[i]) << "\n";
  }
}

// Recipes against each other on the same seeds, and what this sweep can resolve.
// Which of the published effects (L1-L5) this sweep's contrasts show (literature_effects.hpp).
void literature_section(std::ostringstream& md, const ReportFacts& facts) {
  md << "\n## Published effects this sweep bears on (docs/literature.md)\n\n";
  for (const auto& effect : literature_effects(facts.contrasts)) {
    md << "- **" << effect.id << "** " << cell(effect.claim) << ": " << cell(effect.summary)
       << "\n";
    for (const auto& line : effect.lines) md << "  - " << cell(line) << "\n";
  }
}

void resolution_list(std::ostringstream& md, const ReportFacts& facts) {
  md << "\n## What this sweep can resolve\n\n";
  for (std::size_t i = 0; i < facts.resolution.size(); ++i) {
    md << "- `" << facts.resolution[i].family << "`: " << cell(facts.resolution_lines[i]) << "\n";
  }
}

void baselines_table(std::ostringstream& md, const ReportInput& input) {
  md << "\n## Baselines and null runs (high-precision Linear, deterministic GEMM)\n\n";
  md << "| run | kind | workload | seed | operands | steps | final train loss | final eval loss "
        "| step time (s) | FP32 LibTorch step (s) | record |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : input.records) {
    if (is_fp8_run(r)) continue;
    md << "| `" << r["run_id"].get<std::string>() << "` | " << r.value("kind", std::string())
       << " | " << r["workload"].get<std::string>() << " | " << r.value("seed", 0) << " | "
       << r.value("high_precision", std::string("?")) << " | " << r.value("steps_completed", 0)
       << " | " << format_number(number_at(r, "/final/train_loss")) << " | "
       << format_number(number_at(r, "/final/eval_loss")) << " | "
       << format_number(number_at(r, "/throughput/step_seconds")) << " | "
       << format_number(number_at(r, "/throughput/fp32_step_seconds")) << " | "
       << record_link(input, r) << " |\n";
  }
}

void problems_list(std::ostringstream& md, const ReportInput& input, const ReportFacts& facts) {
  bool any_problem = false;
  for (const auto* r : facts.ranked) {
    const auto verdict = run_verdict(*r, facts.floors.of(*r).tolerance);
    const std::string non_finite = first_non_finite_text(*r);
    if (verdict != "diverged" && verdict != "error" && verdict != "failed to train" &&
        non_finite.empty()) {
      continue;
    }
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
    } else if (verdict == "failed to train") {
      md << ": eval loss fell " << format_percent(improvement_ratio(*r))
         << " of the baseline's fall; " << underflow_summary(*r);
    }
    md << "\n";
    // Where it broke, first under the run (experiments/fp8/non_finite.hpp).
    if (!non_finite.empty()) md << "  - " << cell(non_finite) << "\n";
  }
}

}  // namespace

std::string render_markdown_report(const ReportInput& input) {
  const ReportFacts facts(input);
  std::ostringstream md;
  summary(md, input, facts);
  table_markdown(md, ranked_table(input, facts));
  resolution_list(md, facts);
  table_markdown(md, contrasts_table(input, facts));
  literature_section(md, facts);
  md << ablation_markdown(ablation_tables(input.records));
  baselines_table(md, input);
  problems_list(md, input, facts);
  if (const auto layer_stats = render_layer_stats_markdown(input); !layer_stats.empty()) {
    md << '\n' << layer_stats;
  }
  table_markdown(md, throughput_table(facts));
  if (!input.notes.empty()) {
    md << "\n## Notes\n\n";
    for (const auto& n : input.notes) md << "- " << cell(n) << "\n";
  }
  return md.str();
}

}  // namespace fp8lab::experiments
