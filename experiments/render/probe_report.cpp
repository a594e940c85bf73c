#include "experiments/render/probe_report.hpp"

#include <map>
#include <set>

#include "experiments/stats/probe_pairs.hpp"
#include "experiments/stats/probe_summary.hpp"
#include "experiments/stats/rank_prediction.hpp"
#include "experiments/stats/recipe_rows.hpp"

namespace fp8lab::experiments {
namespace {

constexpr auto* text = &text_cell;
constexpr auto* number = &number_cell;

std::string figure(double v) { return format_number(v, "%.4g"); }

// "0.0123 [0.0101, 0.0145]" (the batch-means 95% interval), or the plain mean with its points.
std::string summary_text(const std::optional<MetricSummary>& s) {
  if (!s) return "-";
  if (!s->interval) return figure(s->mean) + " (" + std::to_string(s->points) + " steps)";
  return figure(s->mean) + " [" + figure(s->interval->low()) + ", " + figure(s->interval->high()) +
         "]";
}

// The per-recipe table of one direction.
ReportTable recipe_table(const std::vector<ProbeRecipeSummary>& summaries, std::string title,
                         std::string note) {
  ReportTable table;
  table.title = std::move(title);
  table.note = std::move(note);
  table.columns = {"recipe"};
  for (const auto* m : probe_table_metrics()) table.columns.push_back(m->name);
  table.columns.push_back("Chmiel crossing step");
  table.columns.push_back("worst tensor (mean rel. error)");
  for (const auto& s : summaries) {
    std::vector<ReportCell> row{text(s.recipe)};
    for (const auto& m : s.metrics) row.push_back(number(summary_text(m)));
    row.push_back(number(s.crossing_step ? std::to_string(*s.crossing_step) : "never"));
    ReportCell worst = text(
        s.worst_tensor.empty() ? "-" : s.worst_tensor + " (" + figure(s.worst_rel_error) + ")");
    worst.code = !s.worst_tensor.empty();
    row.push_back(worst);
    table.rows.push_back(std::move(row));
  }
  return table;
}

ReportTable stochastic_table(const std::vector<ProbeRecipeSummary>& on_baseline) {
  ReportTable table;
  table.title = "On the baseline's trajectory: stochastic recipes";
  table.note =
      "Per stochastic recipe, the bias part of the mean gradient over its draws (an unbiased "
      "recipe's interval holds 0) and, separately, the draws' spread around their mean, relative "
      "to ||g|| (docs/results-schema.md, draw_spread); means over probe steps with 95% "
      "batch-means intervals.";
  table.columns = {"recipe", "mean-of-draws bias", "draw spread"};
  for (const auto& s : on_baseline) {
    if (!s.mean_of_draws_bias) continue;
    table.rows.push_back({text(s.recipe), number(summary_text(s.mean_of_draws_bias)),
                          number(summary_text(s.draw_spread))});
  }
  return table;
}

ReportTable pairs_table(const std::vector<ProbePair>& pairs) {
  ReportTable table;
  table.title = "On the baseline's trajectory: recipes against each other";
  table.note =
      "Per pair of recipes and metric, d = a - b at every probe step both were probed at (the "
      "same weights and batch), its mean with the 95% batch-means interval and the two-sided "
      "t-test of mean = 0 over the batch means; lower is better for each metric, so worse means "
      "a's error is larger. Holm over the family of every row of this table; a direction is "
      "stated only when it holds after Holm.";
  table.columns = {"metric", "a", "b", "steps", "mean d [95% CI]", "p", "p Holm", "a vs b"};
  for (const auto& pair : pairs) {
    const auto& t = pair.test;
    ReportCell verdict = text(pair.shown());
    verdict.verdict = pair.shown();
    verdict.detail = holm_note(t);
    table.rows.push_back(
        {text(pair.metric), text(pair.a), text(pair.b), number(std::to_string(pair.steps)),
         number(figure(t.estimate) + " [" + figure(t.ci_low) + ", " + figure(t.ci_high) + "]"),
         number(format_number(t.p_raw, "%.2g")),
         number(format_number(t.p_holm, "%.2g") + " (" + std::to_string(t.family_size) + ")"),
         verdict});
  }
  return table;
}

// Whole-model relative error against step per recipe (the mean over trajectories at each step).
LineChart error_chart(const std::vector<ProbeTrajectory>& trajectories) {
  LineChart chart;
  chart.title = "Whole-model gradient error on the baseline's trajectory";
  chart.x_label = "step";
  chart.y_label = "||g_q - g|| / ||g||";
  chart.log_y = true;
  const auto recipes = probe_recipes(trajectories, kOnBaseline);
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    std::map<std::int64_t, std::pair<double, int>> by_step;
    for (const auto& [point, value] : probe_series(
             trajectories, {kOnBaseline, recipes[i], kAllGemms, kWholeModel}, kProbeRelError)) {
      by_step[point.second].first += value;
      ++by_step[point.second].second;
    }
    ChartSeries series{recipes[i], {}, series_color(i)};
    for (const auto& [step, sum] : by_step) {
      series.points.emplace_back(static_cast<double>(step), sum.first / sum.second);
    }
    chart.series.push_back(std::move(series));
  }
  return chart;
}

std::vector<ProbeHeatmap> heatmaps(const std::vector<ProbeTrajectory>& trajectories,
                                   const ReportInput& input) {
  std::set<std::string> linears;
  for (const auto& record : input.records) {
    if (!record.layers.has_value()) continue;
    for (const auto& row : *record.layers) {
      if (row.layer.has_value()) linears.insert(*row.layer);
    }
  }
  std::vector<ProbeHeatmap> out;
  for (const auto& recipe : probe_recipes(trajectories, kOnBaseline)) {
    const auto a = attribution(trajectories, recipe, linears);
    if (a.tensors.empty()) continue;
    ProbeHeatmap h;
    h.chart.title = "Attribution, " + recipe + ": mean relative gradient error";
    h.chart.x_label = "the one GEMM quantized";
    h.chart.y_label = "parameter tensor";
    h.chart.value_label = "mean ||g_q - g|| / ||g|| over probe steps";
    h.chart.format_value = [](double v) { return figure(v); };
    h.chart.broken_label = "dark red: not finite (an exact gradient of norm 0)";
    h.table.title = "On the baseline's trajectory: attribution, " + recipe;
    h.table.note =
        "Mean relative error of each Linear parameter's gradient over the probe steps with only "
        "one GEMM quantized (the other two in the baseline's precision).";
    h.table.columns = {"tensor"};
    for (const char* v : kAttributionVariants) {
      h.chart.x_values.push_back(v);
      h.table.columns.push_back(v);
    }
    h.chart.y_values = a.tensors;
    for (std::size_t t = 0; t < a.tensors.size(); ++t) {
      std::vector<std::optional<double>> values(a.values[t].begin(), a.values[t].end());
      std::vector<std::string> texts;
      std::vector<ReportCell> row{text(a.tensors[t])};
      row.front().code = true;
      for (const auto& v : values) {
        texts.push_back(v ? figure(*v) : "-");
        row.push_back(number(texts.back()));
      }
      h.chart.values.push_back(std::move(values));
      h.chart.texts.push_back(std::move(texts));
      h.table.rows.push_back(std::move(row));
    }
    out.push_back(std::move(h));
  }
  return out;
}

// Probed recipes that also trained (matched by recipe label, recipe_label_of), their probe error against their paired
// end-of-run loss error (the tail mean of the paired verdict, recipe_rows.hpp).
ReportTable prediction_table(const std::vector<ProbeRecipeSummary>& on_baseline,
                             const ReportFacts& facts) {
  ReportTable table;
  table.title = "Does it predict?";
  table.columns = {"recipe", "probe relative error", "paired end-of-run loss error",
                   "loss verdict"};
  std::map<std::string, double> probe_error;
  for (const auto& s : on_baseline) {
    if (s.metrics[1]) probe_error[s.recipe] = s.metrics[1]->mean;  // relative error
  }
  std::vector<double> x, y;
  std::size_t inconclusive = 0;
  for (const auto& row : facts.rows) {
    // The probes name a recipe by its recipe label alone; the row's label may add the workload
    // options that differ in this report (run_label), which tells such rows apart.
    const auto label = run_label(row.first());
    const auto probe = probe_error.find(recipe_label_of(row.first()));
    if (probe == probe_error.end() || !row.paired.tail) continue;
    x.push_back(probe->second);
    y.push_back(row.paired.tail->mean);
    inconclusive += row.verdict == "inconclusive";
    ReportCell verdict = text(row.verdict);
    verdict.verdict = row.verdict;
    table.rows.push_back({text(label), number(figure(probe->second)),
                          number(signed_percent(row.paired.tail->mean)), verdict});
  }
  if (table.rows.empty()) return table;
  table.note = rank_prediction(x, y).sentence + " " + std::to_string(inconclusive) + " of " +
               std::to_string(x.size()) +
               " recipes' loss verdicts are inconclusive. Rank correlation over recipes between "
               "the mean whole-model probe relative error and the paired end-of-run loss error "
               "(the tail mean, as in the ranked table); recipes resampled with replacement for "
               "the interval.";
  return table;
}

std::vector<ProbeTrajectory> read_trajectories(const ReportInput& input,
                                               std::vector<std::string>& problems) {
  std::vector<ProbeTrajectory> out;
  for (const auto& [id, file] : input.probe_files) {
    try {
      out.push_back({id, read_probes(file)});
    } catch (const std::exception& e) {
      problems.push_back("run " + id + ": " + e.what());
    }
  }
  return out;
}

}  // namespace

std::optional<ProbeSection> probe_section(const ReportInput& input, const ReportFacts& facts) {
  if (input.probe_files.empty()) return std::nullopt;
  std::vector<std::string> problems;
  const auto trajectories = read_trajectories(input, problems);
  const auto on_baseline = probe_summaries(trajectories, kOnBaseline);
  ProbeSection section;
  std::string note =
      "Per recipe probed on a baseline's trajectory: at every probe step, the recipe's forward "
      "and backward at the baseline's weights and batch against the exact step "
      "(docs/results-schema.md, Probe sidecar), whole-model figures. Each is the mean over probe "
      "steps with its 95% batch-means interval (10 batches; experiments/stats/batch_means.hpp), "
      "or the plain mean under 6 steps. Chmiel crossing step: the first probe step where "
      "||g|| / ||g_q - g|| < sqrt(3) (never: it did not). Worst tensor: the highest mean "
      "relative error.";
  for (const auto& p : problems) note += " Not read: " + p + ".";
  section.tables.push_back(recipe_table(on_baseline, "On the baseline's trajectory", note));
  if (section.tables.front().rows.empty()) section.tables.front().empty = note;
  section.tables.push_back(recipe_table(
      probe_summaries(trajectories, kExactOnRun),
      "On the baseline's trajectory: the same, in each recipe's own runs",
      "The reverse direction: in each trained FP8 run, the exact forward and backward at the "
      "run's own weights and batch against the run's own gradient, averaged over the recipe's "
      "runs (seeds). Beside the table above, it shows what a teacher-forced probe cannot: a "
      "recipe that moves its own trajectory where it quantizes worse."));
  section.tables.push_back(stochastic_table(on_baseline));
  section.tables.push_back(pairs_table(probe_pairs(trajectories, input.alpha)));
  section.error_chart = error_chart(trajectories);
  section.heatmaps = heatmaps(trajectories, input);
  section.prediction = prediction_table(on_baseline, facts);
  return section;
}

}  // namespace fp8lab::experiments
