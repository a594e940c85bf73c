#include "experiments/render/report_tables.hpp"

#include <map>
#include <optional>

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/first_non_finite.hpp"
#include "experiments/stats/incomplete_sweep.hpp"
#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/run_provenance.hpp"

namespace fp8lab::experiments {

ReportCell text_cell(std::string t) {
  ReportCell c;
  c.text = std::move(t);
  return c;
}
ReportCell number_cell(std::string t) {
  ReportCell c = text_cell(std::move(t));
  c.numeric = true;
  return c;
}

namespace {

constexpr auto* text = &text_cell;
constexpr auto* number = &number_cell;

// Makes `cell` a link to `record` (runs/<id>.json), its id in monospace; called once per record.
void link_record(ReportCell& cell, const ReportInput& input, const RunRecord& record) {
  cell.code = true;
  cell.links.emplace_back(record.run_id, record_link(input, record));
}

// A step of the record as the JSON has it: "null" when it has none.
std::string step_text(const Field<std::int64_t>& step) {
  return step.has_value() ? std::to_string(*step) : "null";
}

// The verdict with what explains it for a single seed (where it diverged, what it threw).
ReportCell verdict_cell(const RecipeRow& row) {
  const auto& r = row.first();
  ReportCell cell = text(row.verdict_text());
  cell.verdict = row.verdict;
  if (row.runs.size() != 1) return cell;
  if (row.verdict == "diverged") {
    cell.text += " at step " + step_text(r.diverged_at_step) + " (" + *r.divergence_reason + ")";
    if (const auto site = first_non_finite_text(r); !site.empty()) cell.text += "; " + site;
  } else if (row.verdict == "unstable") {
    cell.text += " from step " + step_text(r.unstable_at_step) + " (" + *r.instability_reason + ")";
  } else if (*r.status == "failed") {
    cell.text += ": " + *r.error;
  } else if (row.verdict == "failed") {
    cell.text += " (" + underflow_summary(r) + ")";
  }
  return cell;
}

// "2.345 ± 0.004, paired ± 0.031%" when the records carry the eval loss's standard error and
// per-window losses (eval_sampling_error.hpp), else the loss alone.
std::string eval_loss_text(const RecipeRow& row) {
  const auto loss = format_number(row.median_at(&FinalFigures::eval_loss));
  const auto se = row.median_at(&FinalFigures::eval_loss_se);
  const std::string paired =
      row.paired_eval_se ? ", paired \u00b1 " + format_percent(row.paired_eval_se) : "";
  return (se ? loss + " \u00b1 " + format_number(se, "%.2g") : loss) + paired;
}

// The named test's five cells (named_tests.hpp), in the columns' order.
void append_test_cells(std::vector<ReportCell>& cells, const std::optional<NamedTest>& test) {
  const auto t = test_cells(test);
  cells.push_back(text(t.test));
  for (const auto* value : {&t.p_raw, &t.p_holm, &t.mde80, &t.seeds_for_80}) {
    cells.push_back(number(*value));
  }
}

const std::vector<std::string> kTestColumns = {"test", "p raw", "p Holm (family, size)", "mde80",
                                               "seeds for 80%"};

}  // namespace

std::string interval_text(const std::optional<MeanInterval>& interval) {
  return interval ? describe_interval(*interval) : std::string("-");
}

ReportTable ranked_table(const ReportInput& input, const ReportFacts& facts) {
  ReportTable table;
  table.title = "Recipes ranked (best first)";
  table.note =
      "One line per recipe over its seeds. rel. loss error: per seed (eval loss - baseline's on "
      "the same seed) / baseline's, averaged over the last 10% of eval points; mean over seeds "
      "with its 95% t-interval. verdict, test, p, mde80: the named test of the legend above. "
      "chaos floor: the spread of the null runs' error (a perturbation that is not FP8). runs "
      "as: as asked, or as accelerate + TE / torchao run the settings (upstream); the next "
      "column, marked where it differs, is what that peer would change or refuse.";
  table.columns = {"#", "recipe", "seeds", "verdict"};
  table.columns.insert(table.columns.end(), kTestColumns.begin(), kTestColumns.end());
  for (const char* column :
       {"rel. loss error, tail mean [95% CI]", "final [95% CI]", "chaos floor", "eval loss",
        "|vs baseline| (unpaired)", "forward SQNR (dB)", "gradient SQNR (dB)", "runs as",
        "accelerate + TE / torchao", "record"}) {
    table.columns.emplace_back(column);
  }
  // seeds: auto (seed_plan.hpp): the seeds each row's plan asked for and the seeds it has.
  if (input.seed_planning) {
    table.columns.insert(table.columns.begin() + 3, "seeds planned/run");
    table.note += " seeds planned/run (seeds: auto, seed_budget " +
                  std::to_string(input.seed_planning->budget) +
                  "): the seeds the row's settling test needs for 80% power at its pilot's sd / "
                  "the seeds it ran; its test is Stein's two-stage test (the pilot's sd).";
  }
  int rank = 0;
  for (const auto& row : facts.rows) {
    const auto& r = row.first();
    const auto mark = upstream_mark(r);
    const auto* chaos = facts.chaos.of(r);
    std::vector<ReportCell> cells{number(std::to_string(++rank)), text(run_label(r)),
                                  text(row.seeds_text())};
    if (input.seed_planning) {
      cells.push_back(number(row.seed_plan ? seed_plan_cell(*row.seed_plan, row.runs.size())
                                           : std::string("-")));
    }
    cells.push_back(verdict_cell(row));
    append_test_cells(cells, row.paired.test);
    cells.push_back(number(interval_text(row.paired.tail)));
    cells.push_back(number(interval_text(row.paired.final)));
    cells.push_back(number(chaos ? chaos->cell() : "-"));
    cells.push_back(number(eval_loss_text(row)));
    cells.push_back(number(format_percent(row.median_abs_rel_diff)));
    cells.push_back(number(format_number(row.median_at(&FinalFigures::forward_sqnr_db), "%.1f")));
    cells.push_back(number(format_number(row.median_at(&FinalFigures::gradient_sqnr_db), "%.1f")));
    cells.push_back(text(runs_as_text(r)));
    ReportCell peer = text(short_upstream_mark(r));
    peer.detail = mark.text;
    peer.flagged = mark.differs;
    cells.push_back(std::move(peer));
    ReportCell records;
    for (const auto* run : row.runs) link_record(records, input, *run);
    cells.push_back(std::move(records));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

ReportTable contrasts_table(const ReportInput& input, const ReportFacts& facts) {
  ReportTable table;
  table.title = "Contrasts between recipes on the same seeds";
  table.note = "Per common seed, (tail eval loss of A - of B) / of B; A is the recipe with the "
               "higher mean loss (so no contrast is better); the verdicts are the named tests of "
               "the legend above, against \u00b1" +
               format_percent(input.practical_band) + ".";
  table.empty = "No two recipe rows of one workload differ in exactly one recipe field.";
  table.columns = {"field", "A (higher loss)",       "B",      "recipe B",
                   "seeds", "A vs B, mean [95% CI]", "verdict"};
  table.columns.insert(table.columns.end(), kTestColumns.begin(), kTestColumns.end());
  for (const auto& c : facts.contrasts) {
    ReportCell verdict = text(c.verdict_text());
    verdict.verdict = c.verdict;
    std::vector<ReportCell> cells{text(c.field),
                                  text(c.worse_value),
                                  text(c.better_value),
                                  text(run_label(c.better->first())),
                                  number(std::to_string(c.seeds.size())),
                                  number(interval_text(c.interval)),
                                  std::move(verdict)};
    append_test_cells(cells, c.test);
    table.rows.push_back(std::move(cells));
  }
  return table;
}

ReportTable throughput_table(const ReportFacts& facts) {
  ReportTable table;
  table.title = "Throughput";
  table.note =
      "Measured in each run's own process: the run, the baseline's high-precision Linear and an "
      "unconverted FP32 LibTorch model. steps/s, tokens/s and GEMM share are over the whole run; "
      "the probe columns are medians of a few steps of the three models timed in turn (so that "
      "they share the machine's load), and give the ratios.";
  table.columns = {"recipe",
                   "seed",
                   "run",
                   "steps/s",
                   "tokens/s",
                   "GEMM time share",
                   "FP8 probe step (s)",
                   "baseline step (s)",
                   "FP32 LibTorch step (s)",
                   "FP8 / FP32",
                   "FP8 / baseline"};
  for (const auto* r : facts.ranked) {
    const auto& t = *r->throughput;
    ReportCell id = text(r->run_id);
    id.code = true;
    table.rows.push_back({text(run_label(*r)), number(std::to_string(r->seed.value_or(0))),
                          std::move(id), number(format_number(t.steps_per_second.get())),
                          number(format_number(t.tokens_per_second.get(), "%.0f")),
                          number(format_percent(t.gemm_time_share.get())),
                          number(format_number(t.probe_step_seconds.get())),
                          number(format_number(t.baseline_step_seconds.get())),
                          number(format_number(t.fp32_step_seconds.get())),
                          number(format_number(t.step_time_over_fp32.get(), "%.3g") + "x"),
                          number(format_number(t.step_time_over_baseline.get(), "%.3g") + "x")});
  }
  return table;
}

ReportTable baselines_table(const ReportInput& input) {
  ReportTable table;
  table.title = "Baselines and null runs (high-precision Linear, deterministic GEMM)";
  table.note = "The runs every FP8 run is paired with (baseline) and the perturbation that is not "
               "FP8 (null: initial weights rounded once to bf16), on the same seeds.";
  table.columns = {"run",
                   "kind",
                   "workload",
                   "seed",
                   "operands",
                   "steps",
                   "final train loss",
                   "final eval loss",
                   "step time (s)",
                   "FP32 LibTorch step (s)"};
  for (const auto& r : input.records) {
    if (is_fp8_run(r)) continue;
    ReportCell run;
    link_record(run, input, r);
    if (const auto& status = *r.status; status != "finished") run.text = "(" + status + ")";
    table.rows.push_back({std::move(run), text(r.kind), text(r.workload),
                          number(std::to_string(r.seed.value_or(0))),
                          text(r.high_precision.value_or("?")),
                          number(std::to_string(r.steps_completed.value_or(0))),
                          number(format_number(r.final->train_loss.get())),
                          number(format_number(r.final->eval_loss.get())),
                          number(format_number(r.throughput->step_seconds.get())),
                          number(format_number(r.throughput->fp32_step_seconds.get()))});
  }
  return table;
}

ReportTable noise_floor_table(const ReportInput& input, const ReportFacts& facts) {
  ReportTable table;
  table.title = "Baselines and the unpaired noise floor (context)";
  table.note = "The spread of the baselines' final eval loss over seeds: context for a reader, "
               "not the rule of any verdict (the verdicts are the paired tests above).";
  table.columns = {"workload", "baseline runs", "final eval loss per seed", "noise floor",
                   "verdicts compare with"};
  for (const auto* floor : facts.floors.all()) {
    std::string losses;
    for (std::size_t i = 0; i < floor->seeds.size(); ++i) {
      losses += (losses.empty() ? "" : ", ") + std::string("seed ") +
                std::to_string(floor->seeds[i]) + ": " + format_number(floor->losses[i]);
    }
    ReportCell runs;
    for (const auto& r : input.records) {
      if (r.kind != "baseline" || &facts.floors.of(r) != floor) continue;
      link_record(runs, input, r);
    }
    table.rows.push_back({text(floor->workload), std::move(runs),
                          text(losses.empty() ? "-" : losses),
                          number(floor->floor ? format_percent(floor->floor) : "unmeasured"),
                          text(floor->describe())});
  }
  return table;
}

ReportTable problems_table(const ReportInput& input, const ReportFacts& facts) {
  ReportTable table;
  table.title = "Diverged, unstable, failed and untrained runs";
  table.note =
      "Each FP8 run whose loss went non-finite, which threw, or whose eval loss did not "
      "fall as the baseline's did; where it broke first (experiments/linear/non_finite.hpp).";
  table.columns = {"recipe", "seed", "run", "verdict", "what happened", "where it broke first"};
  for (const auto* r : facts.ranked) {
    const auto verdict = run_verdict(*r, facts.floors.of(*r).tolerance);
    const std::string non_finite = first_non_finite_text(*r);
    if (verdict != "diverged" && verdict != "unstable" && verdict != "error" &&
        verdict != "failed to train" && non_finite.empty()) {
      continue;
    }
    std::string what;
    if (verdict == "diverged") {
      what = "at step " + step_text(r->diverged_at_step) + ": " + *r->divergence_reason;
    } else if (verdict == "unstable") {
      what = "from step " + step_text(r->unstable_at_step) + ": " + *r->instability_reason;
    } else if (verdict == "error") {
      what = *r->error;
    } else if (verdict == "failed to train") {
      what = "eval loss fell " + format_percent(improvement_ratio(*r)) +
             " of the baseline's fall; " + underflow_summary(*r);
    }
    ReportCell run;
    link_record(run, input, *r);
    ReportCell shown = text(verdict);
    shown.verdict = verdict;
    table.rows.push_back({text(run_label(*r)), number(std::to_string(r->seed.value_or(0))),
                          std::move(run), std::move(shown), text(what),
                          text(non_finite.empty() ? "-" : non_finite)});
  }
  return table;
}

ReportTable instability_table(const ReportFacts& facts) {
  const auto& inst = facts.instability;
  ReportTable table;
  table.title = "Instability (unstable runs per arm)";
  table.note = "Unstable: " + inst.rule_text() +
               ". Counts with their exact 95% interval (Clopper-Pearson); Fisher's exact test "
               "against the baselines of the same seeds (two-sided, and one-sided that the arm is "
               "unstable more often), per comparison, outside the Holm families.";
  table.columns = {"family",
                   "arm",
                   "unstable [95% CI]",
                   "its baselines",
                   "Fisher p (two-sided)",
                   "Fisher p (arm more often)"};
  for (const auto& a : inst.arms) {
    table.rows.push_back({text(a.family), text(a.label), number(a.arm.text()),
                          number(a.label == "baseline" ? std::string("-") : a.baseline.text()),
                          number(format_number(a.p_two_sided, "%.2g")),
                          number(format_number(a.p_greater, "%.2g"))});
  }
  return table;
}

ReportTable instability_contrasts_table(const ReportFacts& facts) {
  ReportTable table;
  table.title = "Instability between recipes on the same seeds";
  table.note = "Unstable counts of the two recipes of each contrast above; Fisher's exact test, "
               "two-sided, per comparison, outside the Holm families.";
  table.columns = {"contrast", "unstable (A)", "unstable (B)", "Fisher p (two-sided)"};
  if (facts.instability.arms.empty()) return table;
  for (const auto& c : facts.instability.contrasts) {
    table.rows.push_back({text(c.contrast->title()), number(c.a.text()), number(c.b.text()),
                          number(format_number(c.p_two_sided, "%.2g"))});
  }
  return table;
}

ReportHead report_head(const ReportInput& input, const ReportFacts& facts) {
  ReportHead head;
  head.incomplete = incomplete_text(input.requested, input.records);
  head.sources = input.sources;
  // word -> rows at raw alpha, and rows whose test holds after Holm (tested words only)
  std::map<std::string, std::pair<int, std::optional<int>>> verdicts;
  for (const auto& row : facts.rows) {
    auto& [raw, held] = verdicts[row.verdict];
    ++raw;
    const auto& t = row.paired.test;
    if (!t || t->verdict != row.verdict || row.verdict == "inconclusive") continue;
    held = held.value_or(0) + (t->holds_after_holm() ? 1 : 0);
  }
  for (const auto& [word, n] : verdicts) {
    head.verdicts.emplace_back(word, n.second ? std::to_string(*n.second) + ' ' + word +
                                                    " after Holm (" + std::to_string(n.first) +
                                                    " at raw alpha)"
                                              : std::to_string(n.first) + ' ' + word);
  }
  head.counts = std::to_string(facts.ranked.size()) + " FP8 runs in " +
                std::to_string(facts.rows.size()) + " recipe rows:";
  head.rules = paired_verdict_rules();
  head.scale = facts.scale;
  head.legend = facts.legend;
  head.families = facts.families;
  for (const auto* floor : facts.chaos.all()) {
    head.floors.push_back(floor->workload + ": chaos floor, " + floor->arm +
                          " null arm (paired tail error) " + floor->describe());
  }
  if (facts.chaos.all().empty()) {
    head.floors.push_back(
        "chaos floor: not measured, no null runs (the sweep key null_runs: true runs them)");
  } else {
    head.floors.push_back(
        "each verdict is read against its family's per_step chaos floor where the sweep ran that "
        "null arm (FP8 perturbs every step), else the once floor: the ranked table's chaos floor "
        "column names the arm");
  }
  for (const auto* floor : facts.floors.all()) {
    head.floors.push_back(floor->workload +
                          " (context, not the verdict rule): " + floor->describe());
  }
  if (facts.floors.all().empty()) {
    head.floors.push_back("no baseline record: fixed " + format_percent(kTracksBaselineTolerance) +
                          " tolerance used");
  }
  return head;
}

}  // namespace fp8lab::experiments
