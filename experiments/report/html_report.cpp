#include "experiments/report/html_report.hpp"
#include "experiments/report/incomplete_sweep.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
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
#include "experiments/report/svg_chart.hpp"

namespace fp8lab::experiments {
namespace {

// Curves are grouped by verdict; each group's legend names its best kNamedPerGroup runs and counts
// the others ("+N more"), whose curves are drawn thinner in a lighter shade, each with its hover.
constexpr std::size_t kNamedPerGroup = 3;

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict-tracks,.verdict-equivalent,.verdict-better,.verdict-not{color:#1a7f37}
.verdict-degraded,.verdict-worse{color:#9a6700}
.verdict-inconclusive{color:#57606a}
.verdict-failed,.verdict-diverged,.verdict-error{color:#cf222e;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #e5e5e5}
svg .title{font-size:13px;font-weight:600}svg .tick{font-size:10px;fill:#555}
svg .axis{font-size:11px;fill:#333}svg .legend{font-size:10px}svg .celltext{font-size:10px}
svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#bbb}svg .empty{font-size:12px;fill:#999}
code{font-size:12px}.note{color:#555;font-size:13px}.incomplete{color:#b00020}svg .legend-group{font-weight:600}
tr.upstream-differs td.upstream{background:#fff8c5}
)";

// Checks that every chart drew something; a chart without marks is a console error, which the
// headless-Chromium test of report.html fails on.
const char* kCheckScript = R"(
(function () {
  var charts = document.querySelectorAll('svg.chart');
  var bad = 0;
  charts.forEach(function (c) {
    var marks = c.querySelectorAll('path.series, rect.cell').length;
    if (marks === 0 && !c.querySelector('.empty')) {
      bad++;
      console.error('fp8lab report: chart without marks: ' + c.getAttribute('aria-label'));
    }
  });
  document.body.setAttribute('data-charts', String(charts.length));
  document.body.setAttribute('data-check', bad === 0 ? 'ok' : 'failed');
})();
)";

std::string verdict_class(const std::string& verdict) {
  return "verdict-" + verdict.substr(0, verdict.find(' '));
}

std::vector<std::pair<double, double>> series_of(const nlohmann::json& rows, const char* x,
                                                 const char* y) {
  std::vector<std::pair<double, double>> points;
  if (!rows.is_array()) return points;
  for (const auto& row : rows) {
    if (!row.contains(x) || !row[x].is_number()) continue;
    const double yv = row.contains(y) && row[y].is_number() ? row[y].get<double>() : NAN;
    points.emplace_back(row[x].get<double>(), yv);
  }
  return points;
}

std::vector<std::pair<double, double>> moving_average(
    const std::vector<std::pair<double, double>>& points, std::size_t window) {
  std::vector<std::pair<double, double>> out;
  double sum = 0;
  std::size_t finite = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i].second)) {
      out.emplace_back(points[i].first, NAN);
      continue;
    }
    sum += points[i].second;
    ++finite;
    if (finite > window) {
      // Drop the oldest finite point of the window.
      std::size_t seen = 0;
      for (std::size_t j = i + 1; j-- > 0;) {
        if (std::isfinite(points[j].second) && ++seen == window + 1) {
          sum -= points[j].second;
          break;
        }
      }
    }
    out.emplace_back(points[i].first, sum / static_cast<double>(std::min(finite, window)));
  }
  return out;
}

// Shades of a verdict's colour: the named runs of its group, then the rest.
struct GroupColors {
  std::array<const char*, kNamedPerGroup> named;
  const char* rest;
};

GroupColors verdict_colors(const std::string& verdict) {
  if (verdict == "tracks baseline") return {{"#1a7f37", "#54aeff", "#2da44e"}, "#a7d8b5"};
  if (verdict == "degraded") return {{"#9a6700", "#e16f24", "#d4a72c"}, "#f0d58c"};
  if (verdict == "failed to train") return {{"#8250df", "#bf3989", "#a475f9"}, "#d8c7f7"};
  if (verdict == "diverged") return {{"#cf222e", "#fa4549", "#82071e"}, "#ffb3b0"};
  return {{"#57606a", "#8c959f", "#24292f"}, "#c9d1d9"};
}

// "HYBRID m0, seed 0: tracks baseline, final eval-loss difference +0.42% (run 1a2b...)".
std::string curve_hover(const nlohmann::json& r, const std::string& verdict) {
  return run_label(r) + ", seed " + r.value("seed", nlohmann::json(0)).dump() + ": " + verdict +
         ", final eval-loss difference " + format_percent(number_at(r, "/final/eval_rel_diff")) +
         " (run " + r["run_id"].get<std::string>() + ")";
}

// Baseline curves (black, thick), then every run in ranked order, grouped by verdict.
LineChart curves(
    const ReportInput& input, const std::vector<const nlohmann::json*>& ranked,
    const NoiseFloors& floors, const std::string& title, const std::string& y_label, bool log_y,
    const std::function<std::vector<std::pair<double, double>>(const nlohmann::json&)>& points,
    bool with_baselines) {
  LineChart chart{title, "step", y_label, log_y, {}};
  if (with_baselines) {
    for (const auto& r : input.records) {
      if (r["kind"] != "baseline") continue;
      const auto label = "seed " + r.value("seed", nlohmann::json(0)).dump() + " " +
                         r["workload"].get<std::string>() + " (" +
                         r.value("high_precision", std::string("?")) + ")";
      chart.series.push_back(
          {label, points(r), "#000000", 2.5, false, "baseline", true,
           "baseline " + label + " (run " + r["run_id"].get<std::string>() + ")"});
    }
  }
  // With runs on several seeds a label names the seed too ("s1 HYBRID m0").
  std::set<std::string> seeds;
  for (const auto* r : ranked) seeds.insert(r->value("seed", nlohmann::json(0)).dump());
  std::string group;
  std::size_t in_group = 0;
  for (const auto* r : ranked) {
    const auto verdict = run_verdict(*r, floors.of(*r).tolerance);
    // The seed first, so that a long label cut in the legend keeps it.
    const auto label = seeds.size() > 1
                           ? "s" + r->value("seed", nlohmann::json(0)).dump() + " " + run_label(*r)
                           : run_label(*r);
    if (verdict != group) in_group = 0;
    group = verdict;
    const auto colors = verdict_colors(verdict);
    const bool named = in_group < kNamedPerGroup;
    chart.series.push_back({label, points(*r), named ? colors.named[in_group] : colors.rest,
                            named ? 1.6 : 1.0, (*r)["status"] != "finished", verdict, named,
                            curve_hover(*r, verdict)});
    ++in_group;
  }
  return chart;
}

// One operand row per (layer, tensor): input and weight as read by fprop, grad_output by dgrad.
bool is_primary_operand(const nlohmann::json& row) {
  const auto tensor = row.value("tensor", std::string());
  const auto gemm = row.value("gemm", std::string());
  return (tensor == "grad_output") ? gemm == "dgrad" : gemm == "fprop";
}

LineChart layer_chart(const nlohmann::json& record, const char* field, const std::string& title,
                      const std::string& y_label) {
  std::map<std::string, std::vector<std::pair<double, double>>> by_operand;
  if (record.contains("layers") && record["layers"].is_array()) {
    for (const auto& row : record["layers"]) {
      if (!is_primary_operand(row)) continue;
      const auto key = row.value("layer", std::string()) + "." + row.value("tensor", std::string());
      const auto y = row.contains(field) ? number_or_null(row[field]) : std::nullopt;
      by_operand[key].emplace_back(row.value("step", 0.0), y ? *y : NAN);
    }
  }
  // Grouped by tensor (input, weight, grad_output), kNamedPerGroup layers of each named.
  LineChart chart{title, "step", y_label, true, {}};
  std::size_t t = 0;
  for (const char* tensor : {"input", "weight", "grad_output"}) {
    std::size_t i = 0;
    for (auto& [key, points] : by_operand) {
      if (key.substr(key.rfind('.') + 1) != tensor) continue;
      const bool named = i < kNamedPerGroup;
      chart.series.push_back({key, std::move(points), series_color(t * 4 + (named ? i : 3)),
                              named ? 1.4 : 0.8, false, tensor, named, key});
      ++i;
    }
    ++t;
  }
  return chart;
}

// Fraction of all quantized elements of a step that underflowed (or saturated), over every layer
// and tensor of the run.
std::vector<std::pair<double, double>> fraction_per_step(const nlohmann::json& record,
                                                         const char* field,
                                                         const std::string& only_tensor = "") {
  std::map<double, std::pair<double, double>> sums;  // step -> (field, count)
  if (record.contains("layers") && record["layers"].is_array()) {
    for (const auto& row : record["layers"]) {
      if (!only_tensor.empty() && row.value("tensor", std::string()) != only_tensor) continue;
      auto& s = sums[row.value("step", 0.0)];
      s.first += row.value(field, 0.0);
      s.second += row.value("count", 0.0);
    }
  }
  std::vector<std::pair<double, double>> points;
  for (const auto& [step, s] : sums) {
    points.emplace_back(step, s.second > 0 ? s.first / s.second : NAN);
  }
  return points;
}

// Axis values in numeric order when they are all numbers (0, 4, 16, 1024), else as text.
std::vector<std::string> in_natural_order(const std::set<std::string>& values) {
  std::vector<std::string> out(values.begin(), values.end());
  auto numeric = [](const std::string& v, double& x) {
    char* end = nullptr;
    x = std::strtod(v.c_str(), &end);
    return !v.empty() && end == v.c_str() + v.size();
  };
  double unused = 0;
  if (std::all_of(out.begin(), out.end(),
                  [&](const std::string& v) { return numeric(v, unused); })) {
    std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
      double x = 0, y = 0;
      numeric(a, x);
      numeric(b, y);
      return x < y;
    });
  }
  return out;
}

// Each cell: the median of |final eval-loss difference| over its runs (the other axes and the
// seeds), with n. A diverged or failed run counts as worse than any finished one (+inf in the
// median), so one bad run moves the median by one rank and no more, and a cell whose median is
// such a run shows as broken.
HeatmapChart divergence_heatmap(const std::vector<const nlohmann::json*>& ranked,
                                const std::vector<std::string>& axes) {
  HeatmapChart chart;
  chart.x_label = axes[0];
  chart.y_label = axes[1];
  chart.title = "final |eval-loss difference| vs baseline over " + axes[0] + " x " + axes[1] +
                ": median over the other axes and seeds, with n";
  chart.value_label = "median |relative eval-loss difference|";
  chart.format_value = [](double v) { return format_percent(v); };
  chart.broken_label = "dark red: the median run diverged or failed (such runs count as the "
                       "worst in a cell's median; \u2717 = how many)";
  std::set<std::string> xs, ys;
  struct Cell {
    std::vector<double> values;  // +inf for a run that did not finish
    int broken = 0;
  };
  std::map<std::pair<std::string, std::string>, Cell> cells;
  for (const auto* r : ranked) {
    const auto x = recipe_value(*r, axes[0]), y = recipe_value(*r, axes[1]);
    xs.insert(x);
    ys.insert(y);
    auto& c = cells[{x, y}];
    const auto rel = final_eval_rel_diff(*r);
    if ((*r)["status"] == "finished" && rel) {
      c.values.push_back(*rel);
    } else {
      c.values.push_back(INFINITY);
      ++c.broken;
    }
  }
  chart.x_values = in_natural_order(xs);
  chart.y_values = in_natural_order(ys);
  for (const auto& y : chart.y_values) {
    chart.values.emplace_back();
    chart.texts.emplace_back();
    chart.hovers.emplace_back();
    for (const auto& x : chart.x_values) {
      const auto it = cells.find({x, y});
      if (it == cells.end()) {
        chart.values.back().push_back(std::nullopt);
        chart.texts.back().push_back("");
        chart.hovers.back().push_back(axes[0] + "=" + x + ", " + axes[1] + "=" + y + ": no run");
        continue;
      }
      const auto& c = it->second;
      const double middle = *median(c.values);
      const auto n = std::to_string(c.values.size());
      const auto broken = c.broken ? " " + std::to_string(c.broken) + "\u2717" : std::string();
      chart.values.back().push_back(middle);
      chart.texts.back().push_back(
          (std::isfinite(middle) ? format_percent(middle) : std::string("broken")) + " n=" + n +
          broken);
      // The spread of the finished runs: a median of runs that disagree (other axes mixed in)
      // is a value no run had, and the hover says so.
      std::vector<double> finished;
      for (const double v : c.values) {
        if (std::isfinite(v)) finished.push_back(v);
      }
      const auto [low, high] = std::minmax_element(finished.begin(), finished.end());
      chart.hovers.back().push_back(
          axes[0] + "=" + x + ", " + axes[1] + "=" + y + ": median " +
          (std::isfinite(middle) ? format_percent(middle)
                                 : std::string("a diverged or failed run")) +
          " over n=" + n + " runs" +
          (finished.size() > 1 ? " (finished runs from " + format_percent(*low) + " to " +
                                     format_percent(*high) + ")"
                               : std::string()) +
          (c.broken ? ", of which " + std::to_string(c.broken) +
                          " diverged or failed (counted as the worst)"
                    : std::string()));
    }
  }
  return chart;
}

std::string td(const std::string& text, bool numeric = false) {
  return std::string(numeric ? "<td class=\"num\">" : "<td>") + escape_html(text) + "</td>";
}

std::string interval_text(const std::optional<MeanInterval>& interval) {
  return interval ? describe_interval(*interval) : std::string("-");
}

// The verdict with what explains it for a single seed (where it diverged, what it threw).
std::string shown_verdict(const RecipeRow& row) {
  const auto& r = row.first();
  std::string shown = row.verdict_text();
  if (row.runs.size() != 1) return shown;
  if (row.verdict == "diverged") {
    shown += " at step " + r["diverged_at_step"].dump() + " (" +
             r.value("divergence_reason", std::string()) + ")";
    if (const auto site = first_non_finite_text(r); !site.empty()) shown += "; " + site;
  } else if (r.value("status", std::string()) == "failed") {
    shown += ": " + r.value("error", std::string());
  } else if (row.verdict == "failed") {
    shown += " (" + underflow_summary(r) + ")";
  }
  return shown;
}

// "2.345 ± 0.004, paired ± 0.031%" when the records carry the eval loss's standard error and
// per-window losses (eval_sampling_error.hpp).
std::string eval_loss_text(const RecipeRow& row) {
  const auto loss = format_number(row.median_at("/final/eval_loss"));
  const auto se = row.median_at("/final/eval_loss_se");
  const std::string paired =
      row.paired_eval_se ? ", paired \u00b1 " + format_percent(row.paired_eval_se) : "";
  return (se ? loss + " \u00b1 " + format_number(se, "%.2g") : loss) + paired;
}

// The ranked table: one line per recipe (recipe_rows.hpp): its paired verdict and interval, the
// chaos floor beside it, how it ran, a short mark of what the peer would do (the full text on
// hover), and links to its records.
void ranked_table(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  html << "<h2>Recipes ranked</h2>\n<p class=\"note\">One line per recipe over its seeds. "
       << "<i>rel. loss error</i>: per seed (eval loss - baseline's on the same seed) / "
       << "baseline's, averaged over the last 10% of eval points; mean over seeds with its 95% "
       << "t-interval. <i>verdict</i>, <i>test</i>, <i>p</i>, <i>mde80</i>: the named test of the "
       << "legend above. <i>chaos floor</i>: the spread of the null runs' error (a perturbation "
       << "that is not FP8). <i>runs as</i>: as asked, or as accelerate + TE / torchao run the "
       << "settings (upstream); the next column, highlighted where it differs, is what that peer "
       << "would change or refuse (hover for the full text).</p>\n<table>\n<tr><th>#</th>"
       << "<th>recipe</th><th>seeds</th><th>verdict</th><th>test</th><th>p raw</th>"
       << "<th>p Holm (family, size)</th><th>mde80</th><th>seeds for 80%</th>"
       << "<th>rel. loss error, tail [95% CI]</th><th>final [95% CI]</th><th>chaos floor</th>"
       << "<th>eval loss</th><th>|vs baseline| (unpaired)</th>"
       << "<th>forward SQNR (dB)</th><th>gradient SQNR (dB)</th><th>runs as</th>"
       << "<th>accelerate + TE / torchao</th><th>record</th></tr>\n";
  int rank = 0;
  for (const auto& row : facts.rows) {
    const auto& r = row.first();
    const auto mark = upstream_mark(r);
    const auto* chaos = facts.chaos.of(r);
    const auto t = test_cells(row.paired.test);
    html << "<tr" << (mark.differs ? " class=\"upstream-differs\"" : "") << ">"
         << td(std::to_string(++rank), true) << td(run_label(r)) << td(row.seeds_text())
         << "<td class=\"" << verdict_class(row.verdict) << "\">" << escape_html(shown_verdict(row))
         << "</td>" << td(t.test) << td(t.p_raw, true) << td(t.p_holm, true) << td(t.mde80, true)
         << td(t.seeds_for_80, true) << td(interval_text(row.paired.tail), true)
         << td(interval_text(row.paired.final), true) << td(chaos ? chaos->cell() : "-", true)
         << td(eval_loss_text(row), true) << td(format_percent(row.median_abs_rel_diff), true)
         << td(format_number(row.median_at("/final/forward_sqnr_db"), "%.1f"), true)
         << td(format_number(row.median_at("/final/gradient_sqnr_db"), "%.1f"), true)
         << td(runs_as_text(r)) << "<td class=\"upstream\" title=\"" << escape_html(mark.text)
         << "\">" << (mark.differs ? "\u26a0 " : "") << escape_html(short_upstream_mark(r))
         << "</td><td>";
    for (const auto* run : row.runs) {
      html << "<a href=\"" << escape_html(record_link(input, *run)) << "\"><code>"
           << escape_html((*run)["run_id"].get<std::string>()) << "</code></a> ";
    }
    html << "</td></tr>\n";
  }
  html << "</table>\n";
}

// Recipes against each other on the same seeds, and what the sweep can resolve.
void contrasts_table(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  html << "<h2>What this sweep can resolve</h2>\n<ul class=\"note\">\n";
  for (std::size_t i = 0; i < facts.resolution.size(); ++i) {
    html << "<li><code>" << escape_html(facts.resolution[i].family)
         << "</code>: " << escape_html(facts.resolution_lines[i]) << "</li>\n";
  }
  html << "</ul>\n<h2>Contrasts between recipes on the same seeds</h2>\n";
  if (facts.contrasts.empty()) {
    html << "<p class=\"note\">No two recipe rows of one workload differ in exactly one "
         << "recipe field.</p>\n";
    return;
  }
  html << "<p class=\"note\">Per common seed, (tail eval loss of A - of B) / of B; A has the "
       << "higher mean loss (so no contrast is <i>better</i>); the verdicts are the named tests "
       << "of the legend above, against \u00b1" << escape_html(format_percent(input.practical_band))
       << ".</p>\n"
       << "<table>\n<tr><th>field</th><th>A (higher loss)</th><th>B</th><th>recipe B</th>"
       << "<th>seeds</th><th>A vs B [95% CI]</th><th>verdict</th><th>test</th><th>p raw</th>"
       << "<th>p Holm (family, size)</th><th>mde80</th><th>seeds for 80%</th></tr>\n";
  for (const auto& c : facts.contrasts) {
    const auto t = test_cells(c.test);
    html << "<tr>" << td(c.field) << td(c.worse_value) << td(c.better_value)
         << td(run_label(c.better->first())) << td(std::to_string(c.seeds.size()), true)
         << td(interval_text(c.interval), true) << "<td class=\"" << verdict_class(c.verdict)
         << "\">" << escape_html(c.verdict_text()) << "</td>" << td(t.test) << td(t.p_raw, true)
         << td(t.p_holm, true) << td(t.mde80, true) << td(t.seeds_for_80, true) << "</tr>\n";
  }
  html << "</table>\n";
}

// The layer ranking of `method: ablate` runs (ablation.hpp), one table per ablated recipe.
// Which of the published effects (L1-L5) this sweep's contrasts show (literature_effects.hpp).
void literature_section(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>Published effects this sweep bears on</h2>\n<ul>\n";
  for (const auto& effect : literature_effects(facts.contrasts)) {
    html << "<li><b>" << escape_html(effect.id) << "</b> " << escape_html(effect.claim) << ": "
         << escape_html(effect.summary);
    if (!effect.lines.empty()) {
      html << "\n<ul>\n";
      for (const auto& line : effect.lines) html << "<li>" << escape_html(line) << "</li>\n";
      html << "</ul>";
    }
    html << "</li>\n";
  }
  html << "</ul>\n";
}

void ablation_section(std::ostringstream& html, const ReportInput& input) {
  const auto tables = ablation_tables(input.records);
  if (tables.empty()) return;
  html << "<h2>Layer ablation: which Linears carry the loss gap</h2>\n<p class=\"note\">Paired "
       << "over seeds against each seed's baseline (final eval loss, relative): <i>removed</i> = "
       << "(all FP8 - all FP8 but this one in high precision), <i>alone</i> = (only this one in "
       << "FP8 - baseline); shares are over the gap, their mean ranks the rows; 95% "
       << "t-intervals.</p>\n";
  for (const auto& t : tables) {
    html << "<h3>" << escape_html(t.workload) << ": " << escape_html(t.recipe_label)
         << "</h3>\n<p>gap " << escape_html(t.gap ? describe_interval(*t.gap) : "not measured")
         << "; chaos floor (null runs): "
         << escape_html(t.chaos_floor.empty() ? "not measured" : t.chaos_floor)
         << "</p>\n<table>\n<tr><th>rank</th><th>layer</th><th>GEMM</th><th>share</th>"
         << "<th>removed (paired)</th><th>alone (paired)</th></tr>\n";
    for (const auto* rows : {&t.layers, &t.gemms}) {
      for (std::size_t i = 0; i < rows->size(); ++i) {
        const auto& r = (*rows)[i];
        html << "<tr>" << td(std::to_string(i + 1), true) << td(r.layer) << td(r.gemm)
             << td(format_percent(r.share), true) << td(interval_text(r.removed), true)
             << td(interval_text(r.alone), true) << "</tr>\n";
      }
    }
    html << "</table>\n";
    if (!t.notes.empty()) {
      html << "<ul class=\"note\">\n";
      for (const auto& n : t.notes) html << "<li>" << escape_html(n) << "</li>\n";
      html << "</ul>\n";
    }
  }
}

// The baselines per family: seeds, final eval losses, the noise floor and what verdicts used.
void noise_floor_table(std::ostringstream& html, const ReportInput& input,
                       const NoiseFloors& floors) {
  html << "<h2>Baselines and the unpaired noise floor (context)</h2>\n<table>\n"
       << "<tr><th>workload</th>"
       << "<th>baseline runs</th><th>final eval loss per seed</th><th>noise floor</th>"
       << "<th>verdicts compare with</th></tr>\n";
  for (const auto* floor : floors.all()) {
    std::string losses;
    for (std::size_t i = 0; i < floor->seeds.size(); ++i) {
      losses += (losses.empty() ? "" : ", ") + std::string("seed ") +
                std::to_string(floor->seeds[i]) + ": " + format_number(floor->losses[i]);
    }
    html << "<tr>" << td(floor->workload) << "<td>";
    for (const auto& r : input.records) {
      if (r["kind"] != "baseline" || &floors.of(r) != floor) continue;
      html << "<a href=\"" << escape_html(record_link(input, r)) << "\"><code>"
           << escape_html(r["run_id"].get<std::string>()) << "</code></a>"
           << (r["status"] != "finished" ? " (" + escape_html(r["status"].get<std::string>()) + ")"
                                         : std::string())
           << "<br>";
    }
    html << "</td>" << td(losses.empty() ? "-" : losses)
         << td(floor->floor ? format_percent(floor->floor) : "unmeasured", true)
         << td(floor->describe()) << "</tr>\n";
  }
  html << "</table>\n";
}

// The head: sources, verdict counts, the rules and the floors beside the verdicts.
void head(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<title>fp8lab report</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  html << "<h1>fp8lab report</h1>\n";
  if (const auto incomplete = incomplete_text(input.requested, input.records);
      !incomplete.empty()) {
    html << "<p class=\"incomplete\"><strong>" << escape_html(incomplete) << "</strong></p>\n";
  }
  html << "<p class=\"note\">Results from";
  for (const auto& s : input.sources) html << " <code>" << escape_html(s) << "</code>";
  std::map<std::string, int> verdicts;
  for (const auto& row : facts.rows) ++verdicts[row.verdict];
  html << ". " << facts.ranked.size() << " FP8 runs in " << facts.rows.size() << " recipe rows:";
  for (const auto& [v, n] : verdicts) {
    html << " <span class=\"" << verdict_class(v) << "\">" << n << ' ' << escape_html(v)
         << "</span>;";
  }
  html << ' ' << escape_html(paired_verdict_rules())
       << "</p>\n<p class=\"note\">Scale of the runs:</p>\n<ul class=\"note\">\n";
  for (const auto& line : facts.scale) html << "<li>" << escape_html(line) << "</li>\n";
  html << "</ul>\n<p class=\"note\">The tests:</p>\n<ul class=\"note legend\">\n";
  for (const auto& line : facts.legend) html << "<li>" << escape_html(line) << "</li>\n";
  html << "</ul>\n<p class=\"note\">" << escape_html(facts.families)
       << "</p>\n<ul class=\"note\">\n";
  for (const auto* floor : facts.chaos.all()) {
    html << "<li>"
         << escape_html(floor->workload + ": chaos floor (null runs) " + floor->describe())
         << "</li>\n";
  }
  if (facts.chaos.all().empty()) {
    html << "<li>chaos floor: not measured, no null runs (the sweep key null_runs: true runs "
         << "them)</li>\n";
  }
  for (const auto* floor : facts.floors.all()) {
    html << "<li>"
         << escape_html(floor->workload + " (context, not the verdict rule): " + floor->describe())
         << "</li>\n";
  }
  if (facts.floors.all().empty()) {
    html << "<li>no baseline record: fixed " << format_percent(kTracksBaselineTolerance)
         << " tolerance used</li>\n";
  }
  html << "</ul>\n";
}

// Eval and train loss, their difference from the baseline and the weights' divergence.
void loss_charts(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  const auto& ranked = facts.ranked;
  const auto& floors = facts.floors;
  html << "<h2>Loss against the baseline</h2>\n<div class=\"charts\">\n";
  html << render_line_chart(curves(
      input, ranked, floors, "eval loss", "eval loss", false,
      [](const nlohmann::json& r) { return series_of(r["eval"], "step", "loss"); }, true));
  html << render_line_chart(curves(
      input, ranked, floors, "train loss (moving average of 10 steps)", "train loss", false,
      [](const nlohmann::json& r) {
        return moving_average(series_of(r["train"], "step", "loss"), 10);
      },
      true));
  html << render_line_chart(curves(
      input, ranked, floors, "|eval loss - baseline| / baseline (log scale)", "relative difference",
      true,
      [](const nlohmann::json& r) {
        auto p = series_of(r["eval"], "step", "rel_diff");
        for (auto& xy : p) xy.second = std::fabs(xy.second);
        return p;
      },
      false));
  html << render_line_chart(curves(
      input, ranked, floors, "weight divergence vs baseline (relative L2)",
      "||w - w_baseline|| / ||w_baseline||", true,
      [](const nlohmann::json& r) { return series_of(r["eval"], "step", "weight_rel_l2"); },
      false));
  html << "</div>\n";
}

void heatmap_section(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  const auto axes = heatmap_axes(input);
  html << "<h2>Final divergence over two recipe axes</h2>\n";
  if (axes.size() == 2) {
    html << "<div class=\"charts\">" << render_heatmap(divergence_heatmap(facts.ranked, axes))
         << "</div>\n";
  } else {
    html << "<p class=\"note\">The runs vary fewer than two independent recipe fields: no "
         << "heatmap.</p>\n";
  }
}

// amax and scale per layer of the best and the worst run that quantized anything (a run with
// every GEMM overridden has no FP8 operand to show).
void trajectories_section(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>Scale and amax trajectories</h2>\n";
  std::vector<const nlohmann::json*> with_layers;
  for (const auto* r : facts.ranked) {
    if (r->contains("layers") && (*r)["layers"].is_array() && !(*r)["layers"].empty()) {
      with_layers.push_back(r);
    }
  }
  std::vector<const nlohmann::json*> focus;
  if (!with_layers.empty()) focus.push_back(with_layers.front());
  if (with_layers.size() > 1) focus.push_back(with_layers.back());
  for (const auto* r : focus) {
    const auto label = run_label(*r) + " [" + run_verdict(*r, facts.floors.of(*r).tolerance) + "]";
    html << "<div class=\"charts\">\n"
         << render_line_chart(layer_chart(*r, "amax", "amax per layer: " + label, "amax"))
         << render_line_chart(layer_chart(*r, "scale_max", "scale per layer: " + label,
                                          "scale (q = cast(x * scale))"))
         << "</div>\n";
  }
}

void underflow_charts(std::ostringstream& html, const ReportInput& input,
                      const ReportFacts& facts) {
  const auto& ranked = facts.ranked;
  const auto& floors = facts.floors;
  html << "<h2>Underflow and saturation over time</h2>\n<div class=\"charts\">\n";
  html << render_line_chart(curves(
      input, ranked, floors, "underflowed fraction of grad_output elements (log scale)", "fraction",
      true,
      [](const nlohmann::json& r) { return fraction_per_step(r, "underflowed", "grad_output"); },
      false));
  html << render_line_chart(curves(
      input, ranked, floors, "underflowed fraction, all quantized elements (log scale)", "fraction",
      true, [](const nlohmann::json& r) { return fraction_per_step(r, "underflowed"); }, false));
  html << render_line_chart(curves(
      input, ranked, floors, "saturated fraction, all quantized elements (log scale)", "fraction",
      true, [](const nlohmann::json& r) { return fraction_per_step(r, "saturated"); }, false));
  html << "</div>\n";
}

void throughput_table(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>Throughput</h2>\n<p class=\"note\">Measured in each run's own process: the run, "
       << "the baseline's high-precision Linear and an unconverted FP32 LibTorch model. steps/s, "
       << "tokens/s and GEMM share are over the whole run; the three probe columns are medians "
       << "of a few steps of the three models timed in turn (so that they share the machine's "
       << "load), and give the ratio.</p>\n<table>\n<tr><th>recipe</th><th>seed</th>"
       << "<th>steps/s</th><th>tokens/s</th><th>GEMM time share</th><th>FP8 probe step (s)</th>"
       << "<th>baseline step (s)</th><th>FP32 LibTorch step (s)</th><th>FP8 / FP32</th></tr>\n";
  for (const auto* r : facts.ranked) {
    html << "<tr>" << td(run_label(*r)) << td(r->value("seed", nlohmann::json(0)).dump(), true)
         << td(format_number(number_at(*r, "/throughput/steps_per_second")), true)
         << td(format_number(number_at(*r, "/throughput/tokens_per_second"), "%.0f"), true)
         << td(format_percent(number_at(*r, "/throughput/gemm_time_share")), true)
         << td(format_number(number_at(*r, "/throughput/probe_step_seconds")), true)
         << td(format_number(number_at(*r, "/throughput/baseline_step_seconds")), true)
         << td(format_number(number_at(*r, "/throughput/fp32_step_seconds")), true)
         << td(format_number(number_at(*r, "/throughput/step_time_over_fp32"), "%.3g") + "x", true)
         << "</tr>\n";
  }
  html << "</table>\n";
}

}  // namespace

std::string render_html_report(const ReportInput& input) {
  const ReportFacts facts(input);
  std::ostringstream html;
  head(html, input, facts);
  ranked_table(html, input, facts);
  contrasts_table(html, input, facts);
  literature_section(html, facts);
  ablation_section(html, input);
  noise_floor_table(html, input, facts.floors);
  loss_charts(html, input, facts);
  heatmap_section(html, input, facts);
  trajectories_section(html, facts);
  underflow_charts(html, input, facts);
  html << render_layer_stats_html(input);
  throughput_table(html, facts);
  if (!input.notes.empty()) {
    html << "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : input.notes) html << "<li>" << escape_html(n) << "</li>\n";
    html << "</ul>\n";
  }
  html << "<script>" << kCheckScript << "</script>\n</body>\n</html>\n";
  return html.str();
}

}  // namespace fp8lab::experiments
