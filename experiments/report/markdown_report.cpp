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

// "+0.52% [+0.31%, +0.73%] (n=3)" or "-" when the row has no interval.
std::string interval_cell(const std::optional<MeanInterval>& interval) {
  return interval ? describe_interval(*interval) : std::string("-");
}

// "2.345 ± 0.004, paired ± 0.031%" when the records carry the eval loss's standard error and
// per-window losses (eval_sampling_error.hpp), else the loss alone.
std::string eval_loss_cell(const RecipeRow& row) {
  const auto loss = format_number(row.median_at("/final/eval_loss"));
  const auto se = row.median_at("/final/eval_loss_se");
  const std::string paired = row.paired_eval_se ? ", paired ± " + format_percent(row.paired_eval_se)
                                                : "";
  return (se ? loss + " ± " + format_number(se, "%.2g") : loss) + paired;
}

// One line per recipe; the peer's full text goes to a numbered footnote below the table.
void ranked_table(std::ostringstream& md, const ReportInput& input, const ReportFacts& facts) {
  md << "\n## Recipes ranked (best first)\n\n";
  md << "| # | recipe | seeds | verdict | test | p raw | p Holm (family, size) | mde80 "
        "| seeds for 80% | rel. loss error, tail mean [95% CI] | final [95% CI] "
        "| chaos floor | eval loss | \\|vs baseline\\| (unpaired) | forward SQNR (dB) "
        "| gradient SQNR (dB) | runs as | accelerate + TE / torchao | record |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::string> footnotes;
  int rank = 0;
  for (const auto& row : facts.rows) {
    std::string shown = row.verdict_text();
    if (row.runs.size() == 1 && row.verdict == "diverged") {
      shown += " at step " + row.first()["diverged_at_step"].dump();
    }
    const auto mark = upstream_mark(row.first());
    std::string peer = short_upstream_mark(row.first());
    if (mark.differs) {
      footnotes.push_back(mark.text);
      peer = "**" + peer + "** [" + std::to_string(footnotes.size()) + "]";
    }
    const auto* chaos = facts.chaos.of(row.first());
    const auto t = test_cells(row.paired.test);
    md << "| " << ++rank << " | " << cell(run_label(row.first())) << " | " << row.seeds_text()
       << " | " << cell(shown) << " | " << cell(t.test) << " | " << t.p_raw << " | " << t.p_holm
       << " | " << t.mde80 << " | " << t.seeds_for_80 << " | " << interval_cell(row.paired.tail)
       << " | " << interval_cell(row.paired.final) << " | " << (chaos ? chaos->cell() : "-")
       << " | " << eval_loss_cell(row) << " | " << format_percent(row.median_abs_rel_diff) << " | "
       << format_number(row.median_at("/final/forward_sqnr_db"), "%.1f") << " | "
       << format_number(row.median_at("/final/gradient_sqnr_db"), "%.1f") << " | "
       << cell(runs_as_text(row.first())) << " | " << peer << " | " << record_links(input, row)
       << " |\n";
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

void contrasts_section(std::ostringstream& md, const ReportInput& input, const ReportFacts& facts) {
  md << "\n## What this sweep can resolve\n\n";
  for (std::size_t i = 0; i < facts.resolution.size(); ++i) {
    md << "- `" << facts.resolution[i].family << "`: " << cell(facts.resolution_lines[i]) << "\n";
  }
  md << "\n## Contrasts between recipes on the same seeds\n\n";
  if (facts.contrasts.empty()) {
    md << "No two recipe rows of one workload differ in exactly one recipe field.\n";
    return;
  }
  md << "Per common seed, (tail eval loss of A - of B) / of B; A is the recipe with the higher "
        "mean loss (so no contrast is `better`); the verdicts are the tests above, against ±"
     << format_percent(input.practical_band) << ".\n\n";
  md << "| field | A (higher loss) | B | recipe B | seeds | A vs B, mean [95% CI] | verdict | test "
        "| p raw | p Holm (family, size) | mde80 | seeds for 80% |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : facts.contrasts) {
    const auto t = test_cells(c.test);
    md << "| " << cell(c.field) << " | " << cell(c.worse_value) << " | " << cell(c.better_value)
       << " | " << cell(run_label(c.better->first())) << " | " << c.seeds.size() << " | "
       << interval_cell(c.interval) << " | " << cell(c.verdict_text()) << " | " << cell(t.test)
       << " | " << t.p_raw << " | " << t.p_holm << " | " << t.mde80 << " | " << t.seeds_for_80
       << " |\n";
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

void throughput_table(std::ostringstream& md, const ReportFacts& facts) {
  md << "\n## Throughput (same process: FP8 run, baseline Linear, FP32 LibTorch Linear)\n\n";
  md << "| recipe | seed | run | steps/s | tokens/s | GEMM time share | step / FP32 LibTorch step "
        "| step / baseline step |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  for (const auto* r : facts.ranked) {
    md << "| " << cell(run_label(*r)) << " | " << r->value("seed", nlohmann::json(0)).dump()
       << " | `" << (*r)["run_id"].get<std::string>() << "` | "
       << format_number(number_at(*r, "/throughput/steps_per_second")) << " | "
       << format_number(number_at(*r, "/throughput/tokens_per_second"), "%.0f") << " | "
       << format_percent(number_at(*r, "/throughput/gemm_time_share")) << " | "
       << format_number(number_at(*r, "/throughput/step_time_over_fp32"), "%.3g") << "x | "
       << format_number(number_at(*r, "/throughput/step_time_over_baseline"), "%.3g") << "x |\n";
  }
}

}  // namespace

std::string render_markdown_report(const ReportInput& input) {
  const ReportFacts facts(input);
  std::ostringstream md;
  summary(md, input, facts);
  ranked_table(md, input, facts);
  contrasts_section(md, input, facts);
  literature_section(md, facts);
  md << ablation_markdown(ablation_tables(input.records));
  baselines_table(md, input);
  problems_list(md, input, facts);
  if (const auto layer_stats = render_layer_stats_markdown(input); !layer_stats.empty()) {
    md << '\n' << layer_stats;
  }
  throughput_table(md, facts);
  if (!input.notes.empty()) {
    md << "\n## Notes\n\n";
    for (const auto& n : input.notes) md << "- " << cell(n) << "\n";
  }
  return md.str();
}

}  // namespace fp8lab::experiments
