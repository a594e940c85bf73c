#include "experiments/render/summary_csv.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "experiments/render/test_columns.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/stats/eval_sampling_error.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/report_facts.hpp"
#include "experiments/stats/run_provenance.hpp"

namespace fp8lab::experiments {
namespace {

// A sweep.json row's field as text ("" when absent or null).
std::string text_at(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// A record's field as text ("" when absent or null).
std::string text_of(const std::string& value) { return value; }
std::string text_of(const Field<std::string>& field) { return field.value_or(""); }
std::string text_of(const Field<std::int64_t>& field) {
  return field.has_value() ? std::to_string(*field) : "";
}

// The paired columns: the recipe row's named test against its baseline and its verdict
// (test_columns.hpp), the reason, this seed's errors, the seeds of the test, the band and alpha,
// the chaos floor beside it, and the eval set's sampling error of this seed's paired error
// (against `baseline`, the record it was compared with, if present).
void paired_fields(std::ostringstream& csv, const RunRecord& r, const RecipeRow* row,
                   const ReportFacts& facts, const ReportInput& input, const RunRecord* baseline) {
  const auto sampling = baseline ? eval_sampling_error(r, *baseline) : std::nullopt;
  const auto* chaos = facts.chaos.of(r);
  const NamedTest* test = row != nullptr && row->paired.test ? &*row->paired.test : nullptr;
  csv << (row ? test_columns(test, row->verdict, row->unstable_runs, row->runs.size())
              : test_columns(nullptr, "", 0, 0))
      << ',' << csv_field(row ? row->verdict_text() : std::string()) << ','
      << csv_number(final_rel_error(r)) << ',' << csv_number(tail_rel_error(r)) << ','
      << (row ? std::to_string(row->paired.finished) : std::string()) << ','
      << csv_number(input.practical_band) << ',' << csv_number(input.alpha) << ','
      << csv_number(chaos && chaos->tail ? std::optional(chaos->tail->sd) : std::nullopt) << ','
      << (chaos ? chaos->arm : std::string()) << ',' << csv_number(eval_loss_standard_error(r))
      << ',' << csv_number(sampling ? std::optional(sampling->paired) : std::nullopt) << ',';
  // The row's unstable count against its baselines' (instability_counts.hpp).
  const auto* arm = row != nullptr ? facts.instability.of(*row) : nullptr;
  const bool counted = arm != nullptr && arm->arm.runs > 0;
  csv << csv_number(counted ? std::optional(arm->arm.interval.low) : std::nullopt) << ','
      << csv_number(counted ? std::optional(arm->arm.interval.high) : std::nullopt) << ','
      << (arm != nullptr ? std::to_string(arm->baseline.unstable) : std::string()) << ','
      << (arm != nullptr ? std::to_string(arm->baseline.runs) : std::string()) << ','
      << csv_number(arm != nullptr ? arm->p_two_sided : std::nullopt) << '\n';
}

}  // namespace

std::string render_summary_csv(const ReportInput& input) {
  return render_summary_csv(input, ReportFacts(input));
}

std::string render_summary_csv(const ReportInput& input, const ReportFacts& facts) {
  static const std::string header =
      std::string(
          "request_index,request_label,run_id,workload,seed,status,run_verdict,"
          "final_train_loss,"
          "final_eval_loss,baseline_eval_loss,eval_abs_diff,eval_rel_diff,weight_rel_l2,grad_rel_"
          "l2,"
          "diverged_at_step,steps_completed,steps_per_second,tokens_per_second,gemm_time_share,"
          "step_time_over_fp32,step_time_over_baseline,high_precision,mapping_note,recipe,error,"
          "runs_as,upstream,upstream_differs,record,noise_floor,tracks_tolerance,tolerance_"
          "source,") +
      kTestColumns +
      ",paired_reason,rel_error_final,rel_error_tail,recipe_seeds,practical_band,alpha,"
      "chaos_floor_sd,chaos_floor_arm,eval_loss_se,paired_eval_se,unstable_ci_low,unstable_ci_high,"
      "baseline_unstable_runs,baseline_runs,unstable_p_fisher\n";
  std::map<std::string, const RunRecord*> by_id;
  for (const auto& r : input.records) by_id[r.run_id] = &r;

  const auto& floors = facts.floors;
  std::map<std::string, const RecipeRow*> row_of;  // run id -> its recipe row
  for (const auto& row : facts.rows) {
    for (const auto* r : row.runs) row_of[r->run_id] = &row;
  }
  std::ostringstream csv;
  csv << header;
  auto row = [&](const std::string& index, const std::string& label, const std::string& run_id,
                 const std::string& note) {
    const auto it = by_id.find(run_id);
    const RunRecord empty;
    const auto& r = it != by_id.end() ? *it->second : empty;
    const auto& final = *r.final;
    const auto& throughput = *r.throughput;
    const bool present = it != by_id.end();
    csv << csv_field(index) << ',' << csv_field(label) << ',' << csv_field(run_id) << ','
        << csv_field(text_of(r.workload)) << ',' << text_of(r.seed) << ','
        << (present ? text_of(r.status) : "missing") << ','
        << csv_field(present ? run_verdict(r, floors.of(r).tolerance) : "not run") << ','
        << csv_number(final.train_loss.get()) << ',' << csv_number(final.eval_loss.get()) << ','
        << csv_number(final.baseline_eval_loss.get()) << ','
        << csv_number(final.eval_abs_diff.get()) << ',' << csv_number(final.eval_rel_diff.get())
        << ',' << csv_number(final.weight_rel_l2.get()) << ','
        << csv_number(final.grad_rel_l2.get()) << ',' << text_of(r.diverged_at_step) << ','
        << text_of(r.steps_completed) << ',' << csv_number(throughput.steps_per_second.get()) << ','
        << csv_number(throughput.tokens_per_second.get()) << ','
        << csv_number(throughput.gemm_time_share.get()) << ','
        << csv_number(throughput.step_time_over_fp32.get()) << ','
        << csv_number(throughput.step_time_over_baseline.get()) << ',' << text_of(r.high_precision)
        << ',' << csv_field(note) << ',' << csv_field(text_of(r.recipe_canonical)) << ','
        << csv_field(text_of(r.error));
    if (!present) {  // the columns after `error` (the 25th) stay empty
      csv << std::string(std::count(header.begin(), header.end(), ',') - 24, ',') << '\n';
      return;
    }
    const auto mark = upstream_mark(r);
    const auto& floor = floors.of(r);
    csv << ',' << csv_field(runs_as_text(r)) << ',' << csv_field(mark.text) << ','
        << (mark.differs ? "true" : "false") << ',' << csv_field(record_link(input, r)) << ','
        << csv_number(floor.floor) << ',' << csv_number(floor.tolerance) << ','
        << csv_field(floor.describe()) << ',';
    paired_fields(csv, r, row_of.contains(run_id) ? row_of.at(run_id) : nullptr, facts, input,
                  find_baseline(input.records, r));
  };
  if (!input.requested.empty()) {
    for (const auto& q : input.requested) {
      row(text_at(q, "index"), text_at(q, "label"), text_at(q, "run_id"), text_at(q, "note"));
    }
  } else {
    for (const auto& r : input.records) {
      if (!is_fp8_run(r)) continue;
      row("", run_label(r), r.run_id, "");
    }
  }
  return csv.str();
}

}  // namespace fp8lab::experiments
