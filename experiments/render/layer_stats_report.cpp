#include "experiments/render/layer_stats_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "experiments/render/svg_chart.hpp"

namespace fp8lab::experiments {
namespace {

std::size_t index_of(std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  names.push_back(name);
  return names.size() - 1;
}

// The sidecar rows of a run, or the reason there are none (for the notes).
struct Sidecar {
  std::vector<LayerStatsRow> rows;
  std::string problem;  // empty: read
};
Sidecar read_sidecar(const ReportInput& input, const std::string& run_id) {
  const auto it = input.layer_stats_files.find(run_id);
  if (it == input.layer_stats_files.end()) return {{}, "no sidecar"};
  try {
    return {read_layer_stats(it->second), ""};
  } catch (const std::exception& e) {
    return {{}, e.what()};
  }
}

// At most `columns` steps of `table`, evenly spaced, the last included: a long run's heatmap
// stays readable.
std::vector<std::size_t> shown_steps(const LayerStepTable& table, std::size_t columns) {
  std::vector<std::size_t> shown;
  const std::size_t n = table.steps.size();
  if (n <= columns) {
    for (std::size_t i = 0; i < n; ++i) shown.push_back(i);
    return shown;
  }
  for (std::size_t k = 0; k < columns; ++k) shown.push_back(k * (n - 1) / (columns - 1));
  return shown;
}

// The underflow% or the SQNR heatmap of one recipe's rows.
std::string heatmap(const LayerStepTable& table, const std::string& title, bool sqnr) {
  HeatmapChart chart;
  chart.title = title;
  chart.x_label = "step";
  chart.y_label = "layer";
  const auto columns = shown_steps(table, 16);
  for (const auto c : columns) chart.x_values.push_back(std::to_string(table.steps[c]));
  chart.y_values = table.layers;
  // Darker is worse in both: SQNR is drawn as its negative, and its cells say the dB.
  chart.value_label = sqnr ? "worst SQNR of the layer's copies, dB (darker: lower)"
                           : "underflow %, all copies of the layer (darker: more)";
  chart.broken_label = "dark red: no finite value";
  chart.format_value = [sqnr](double v) {
    return sqnr ? format_number(-v, "%.1f") : format_number(v, "%.2g") + "%";
  };
  for (std::size_t r = 0; r < table.layers.size(); ++r) {
    auto& values = chart.values.emplace_back();
    auto& texts = chart.texts.emplace_back();
    for (const auto c : columns) {
      const auto& cell = table.figures[r][c];
      if (!cell) {
        values.emplace_back();
        texts.emplace_back();
      } else if (sqnr) {
        const double db = cell->worst_sqnr_db;
        values.push_back(std::isinf(db) && db > 0 ? std::optional<double>() : -db);
        texts.push_back(std::isinf(db) && db > 0 ? "exact" : format_number(db, "%.1f"));
      } else {
        values.push_back(cell->underflow_pct);
        texts.push_back(format_number(cell->underflow_pct, "%.2g"));
      }
    }
  }
  return render_heatmap(chart, 44, 22);
}

// Pooled figures of one recipe's rows of a sidecar (the what-if table's cells).
struct RecipeSummary {
  double underflowed = 0, saturated = 0, count = 0;
  std::vector<double> sqnr;
  double worst_underflow_pct = -1;
  std::string worst;  // layer tensor/gemm of the worst underflow%
};
std::map<std::string, RecipeSummary> summarize(const std::vector<LayerStatsRow>& rows) {
  std::map<std::string, RecipeSummary> by_recipe;
  for (const auto& row : rows) {
    if (row.recipe == kOptimizerStatesRecipe) continue;  // AdamW's moments, not a GEMM operand
    auto& s = by_recipe[row.recipe];
    s.underflowed += static_cast<double>(row.underflowed);
    s.saturated += static_cast<double>(row.saturated);
    s.count += static_cast<double>(row.count);
    if (!std::isnan(row.sqnr_db)) s.sqnr.push_back(row.sqnr_db);
    if (row.underflow_pct > s.worst_underflow_pct) {
      s.worst_underflow_pct = row.underflow_pct;
      s.worst = row.layer + " " + row.tensor + "/" + row.gemm + " (step " +
                std::to_string(row.step) + ")";
    }
  }
  return by_recipe;
}

std::string median_text(std::vector<double> values) {
  if (values.empty()) return "-";
  std::sort(values.begin(), values.end());
  return format_number(values[values.size() / 2], "%.1f");
}
std::string min_text(const std::vector<double>& values) {
  if (values.empty()) return "-";
  return format_number(*std::min_element(values.begin(), values.end()), "%.1f");
}
std::string pct_text(double part, double whole) {
  return whole > 0 ? format_number(100.0 * part / whole, "%.3g") + "%" : "-";
}

std::string cell(const std::string& text) { return "<td>" + escape_html(text) + "</td>"; }

// The what-if table (report.html and report.md): its columns, and one row of cells per recipe of
// a run's sidecar, beside the baseline's figures for the same recipe (for `trained`, the run's
// scaling).
constexpr std::array<const char*, 10> kWhatIfColumns{"run",
                                                     "seed",
                                                     "recipe",
                                                     "underflow%",
                                                     "overflow%",
                                                     "median SQNR dB",
                                                     "worst SQNR dB",
                                                     "worst underflow at",
                                                     "baseline underflow%",
                                                     "baseline median SQNR dB"};
constexpr const char* kWhatIfNote =
    "Each row pools one recipe's rows of a run's sidecar over layers, tensors, copies and steps; "
    "`trained` is the run's own quantization. Baseline columns: the same recipe measured on the "
    "baseline's tensors (for `trained`, the run's scaling).";

std::vector<std::vector<std::string>> what_if_rows(const RunRecord& record, const Sidecar& run,
                                                   const Sidecar& base,
                                                   const std::string& scaling) {
  std::vector<std::vector<std::string>> rows;
  const auto base_summary = summarize(base.rows);
  for (const auto& [recipe, s] : summarize(run.rows)) {
    std::vector<std::string> row{run_label(record),
                                 std::to_string(record.seed.value_or(0)),
                                 recipe,
                                 pct_text(s.underflowed, s.count),
                                 pct_text(s.saturated, s.count),
                                 median_text(s.sqnr),
                                 min_text(s.sqnr),
                                 s.worst};
    const auto b = base_summary.find(recipe == kTrainedRecipe ? scaling : recipe);
    row.push_back(b != base_summary.end() ? pct_text(b->second.underflowed, b->second.count) : "-");
    row.push_back(b != base_summary.end() ? median_text(b->second.sqnr) : "-");
    rows.push_back(std::move(row));
  }
  return rows;
}

// An FP8 record with a sidecar, both sidecars read (the baseline's may be missing), and the run's
// scaling; nullopt for records without one.
struct RunSidecars {
  std::string run_id, scaling;
  Sidecar run, base;
};
std::optional<RunSidecars> run_sidecars(const ReportInput& input, const RunRecord& record) {
  if (record.kind != "fp8" || !record.layer_stats_sidecar.has_value()) return std::nullopt;
  RunSidecars r;
  r.run_id = record.run_id;
  r.scaling = record.recipe_value("scaling");
  r.run = read_sidecar(input, r.run_id);
  const RunRecord* baseline = find_baseline(input.records, record);
  r.base = baseline != nullptr ? read_sidecar(input, baseline->run_id)
                               : Sidecar{{}, "no baseline record"};
  return r;
}

}  // namespace

LayerStepTable layer_step_table(const std::vector<LayerStatsRow>& rows, const std::string& recipe) {
  LayerStepTable table;
  std::map<std::pair<std::size_t, std::int64_t>, std::pair<double, double>> counts;
  std::map<std::pair<std::size_t, std::int64_t>, double> worst;
  for (const auto& row : rows) {
    if (row.recipe != recipe) continue;
    const std::size_t layer = index_of(table.layers, row.layer);
    if (std::find(table.steps.begin(), table.steps.end(), row.step) == table.steps.end()) {
      table.steps.push_back(row.step);
    }
    auto& [underflowed, count] = counts[{layer, row.step}];
    underflowed += static_cast<double>(row.underflowed);
    count += static_cast<double>(row.count);
    auto [it, fresh] =
        worst.try_emplace({layer, row.step}, std::numeric_limits<double>::infinity());
    (void)fresh;
    if (!std::isnan(row.sqnr_db)) it->second = std::min(it->second, row.sqnr_db);
  }
  std::sort(table.steps.begin(), table.steps.end());
  table.figures.assign(table.layers.size(),
                       std::vector<std::optional<LayerStepFigures>>(table.steps.size()));
  for (const auto& [key, c] : counts) {
    const auto column = static_cast<std::size_t>(
        std::lower_bound(table.steps.begin(), table.steps.end(), key.second) - table.steps.begin());
    table.figures[key.first][column] =
        LayerStepFigures{c.second > 0 ? 100.0 * c.first / c.second : 0.0, worst.at(key)};
  }
  return table;
}

std::string render_layer_stats_html(const ReportInput& input) {
  if (input.layer_stats_files.empty()) return "";
  std::ostringstream html;
  html << "<h2>Per-layer statistics</h2>\n<p class=\"note\">From each run's sidecar "
          "(<code>layer_stats/&lt;run_id&gt;.parquet</code>). Left: the run's own quantization, "
          "per layer pooled over input, weight and grad_output copies (underflow%: "
          "\u03a3underflowed / \u03a3count; SQNR: the worst copy). Right: its baseline's "
          "what-if rows of the same scaling, the same quantization of the high-precision "
          "trajectory's tensors, when the baseline measured it (sweep key <code>what_if</code>)."
          "</p>\n";
  std::vector<std::string> notes;
  std::vector<std::vector<std::string>> table;
  std::size_t shown = 0, more = 0;
  for (const auto& record : input.records) {
    const auto sidecars = run_sidecars(input, record);
    if (!sidecars) continue;
    const auto& [run_id, scaling, run, base] = *sidecars;
    if (!run.problem.empty()) {
      notes.push_back("run " + run_id + ": " + run.problem);
      continue;
    }
    if (shown < kMaxLayerStatsRuns) {
      ++shown;
      const auto mine = layer_step_table(run.rows, kTrainedRecipe);
      const auto theirs = layer_step_table(base.rows, scaling);
      html << "<h3>" << escape_html(run_label(record)) << " <small>" << escape_html(run_id)
           << "</small></h3>\n<div class=\"charts\">\n";
      for (const bool sqnr : {false, true}) {
        const char* what = sqnr ? "SQNR" : "underflow%";
        html << heatmap(mine, std::string(what) + ": this run", sqnr);
        if (!theirs.layers.empty()) {
          html << heatmap(theirs, std::string(what) + ": baseline, " + scaling + " what-if", sqnr);
        }
      }
      if (theirs.layers.empty()) {
        html << "<p class=\"note\">The baseline has no " << escape_html(scaling)
             << " what-if rows ("
             << escape_html(base.problem.empty() ? "not measured" : base.problem) << "): add <code>"
             << escape_html(scaling)
             << "</code> to the sweep's <code>what_if</code> to see it here.</p>\n";
      }
      html << "</div>\n";
    } else {
      ++more;
    }
    for (auto& row : what_if_rows(record, run, base, scaling)) table.push_back(std::move(row));
  }
  if (more > 0) {
    notes.push_back(std::to_string(more) +
                    " more runs have sidecars; the heatmaps show the first " +
                    std::to_string(kMaxLayerStatsRuns) +
                    " (notebooks/layer_statistics.ipynb "
                    "draws any run)");
  }
  if (!table.empty()) {
    html << "<h3>What-if recipes</h3>\n<p class=\"note\">" << escape_html(kWhatIfNote)
         << "</p>\n<table>\n<tr>";
    for (const char* column : kWhatIfColumns) html << "<th>" << escape_html(column) << "</th>";
    html << "</tr>\n";
    for (const auto& row : table) {
      html << "<tr>";
      for (const auto& text : row) html << cell(text);
      html << "</tr>\n";
    }
    html << "</table>\n";
  }
  if (!notes.empty()) {
    html << "<ul class=\"note\">\n";
    for (const auto& n : notes) html << "<li>" << escape_html(n) << "</li>\n";
    html << "</ul>\n";
  }
  return html.str();
}

std::string render_layer_stats_markdown(const ReportInput& input) {
  std::ostringstream md;
  std::vector<std::string> problems;
  bool header = false;
  for (const auto& record : input.records) {
    const auto sidecars = run_sidecars(input, record);
    if (!sidecars) continue;
    if (!sidecars->run.problem.empty()) {
      problems.push_back("run " + sidecars->run_id + ": " + sidecars->run.problem);
      continue;
    }
    if (!header) {
      header = true;
      md << "## What-if recipes (per-layer statistics)\n\n"
         << kWhatIfNote << " Heatmaps over layers x steps: report.html.\n\n|";
      for (const char* column : kWhatIfColumns) md << ' ' << column << " |";
      md << "\n|";
      for (std::size_t i = 0; i < kWhatIfColumns.size(); ++i) md << "---|";
      md << '\n';
    }
    for (const auto& row : what_if_rows(record, sidecars->run, sidecars->base, sidecars->scaling)) {
      md << '|';
      for (const auto& text : row) md << ' ' << text << " |";
      md << '\n';
    }
  }
  if (header) md << '\n';
  for (const auto& p : problems) md << "- " << p << '\n';
  if (!problems.empty()) md << '\n';
  return md.str();
}

}  // namespace fp8lab::experiments
