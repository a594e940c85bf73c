#include "experiments/render/report_charts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/noise_floor.hpp"

namespace fp8lab::experiments {
namespace {

// Curves are grouped by verdict; each group's legend names its best kNamedPerGroup runs and counts
// the others ("+N more"), whose curves are drawn thinner in a lighter shade, each with its hover.
constexpr std::size_t kNamedPerGroup = 3;

// (step, y) of each train or eval row; y NaN where the row has none.
template <class Row>
std::vector<std::pair<double, double>> series_of(const Field<std::vector<Row>>& rows,
                                                 Field<double> Row::*y) {
  std::vector<std::pair<double, double>> points;
  for (const auto& row : *rows) {
    points.emplace_back(static_cast<double>(row.step), (row.*y).value_or(NAN));
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
  if (verdict == "within tolerance") return {{"#1a7f37", "#54aeff", "#2da44e"}, "#a7d8b5"};
  if (verdict == "beyond tolerance") return {{"#9a6700", "#e16f24", "#d4a72c"}, "#f0d58c"};
  if (verdict == "failed to train") return {{"#8250df", "#bf3989", "#a475f9"}, "#d8c7f7"};
  if (verdict == "diverged") return {{"#cf222e", "#fa4549", "#82071e"}, "#ffb3b0"};
  if (verdict == "unstable") return {{"#bc4c00", "#fb8f44", "#762c00"}, "#ffd8b5"};
  return {{"#57606a", "#8c959f", "#24292f"}, "#c9d1d9"};
}

// The record's seed as text ("0" when it has none).
std::string seed_text(const RunRecord& r) { return std::to_string(r.seed.value_or(0)); }

// "HYBRID m0, seed 0: within tolerance, final eval-loss difference +0.42% (run 1a2b...)".
std::string curve_hover(const RunRecord& r, const std::string& verdict) {
  return run_label(r) + ", seed " + seed_text(r) + ": " + verdict +
         ", final eval-loss difference " +
         format_percent(r.final.has_value() ? r.final->eval_rel_diff.get() : std::nullopt) +
         " (run " + r.run_id + ")";
}

// Baseline curves (black, thick), then every run in ranked order, grouped by verdict.
LineChart curves(
    const ReportInput& input, const std::vector<const RunRecord*>& ranked,
    const NoiseFloors& floors, const std::string& title, const std::string& y_label, bool log_y,
    const std::function<std::vector<std::pair<double, double>>(const RunRecord&)>& points,
    bool with_baselines) {
  LineChart chart{title, "step", y_label, log_y, {}};
  if (with_baselines) {
    for (const auto& r : input.records) {
      if (r.kind != "baseline") continue;
      const auto label = "seed " + seed_text(r) + " " + r.workload + " (" +
                         r.high_precision.value_or("?") + ")";
      chart.series.push_back({label, points(r), "#000000", 2.5, false, "baseline", true,
                              "baseline " + label + " (run " + r.run_id + ")"});
    }
  }
  // With runs on several seeds a label names the seed too ("s1 HYBRID m0").
  std::set<std::string> seeds;
  for (const auto* r : ranked) seeds.insert(seed_text(*r));
  std::string group;
  std::size_t in_group = 0;
  for (const auto* r : ranked) {
    const auto verdict = run_verdict(*r, floors.of(*r).tolerance);
    // The seed first, so that a long label cut in the legend keeps it.
    const auto label = seeds.size() > 1 ? "s" + seed_text(*r) + " " + run_label(*r) : run_label(*r);
    if (verdict != group) in_group = 0;
    group = verdict;
    const auto colors = verdict_colors(verdict);
    const bool named = in_group < kNamedPerGroup;
    chart.series.push_back({label, points(*r), named ? colors.named[in_group] : colors.rest,
                            named ? 1.6 : 1.0, *r->status != "finished", verdict, named,
                            curve_hover(*r, verdict)});
    ++in_group;
    // A precision schedule's switches (recipes/schedule.hpp), one marker per step and run.
    if (r->schedule_switches.has_value()) {
      for (const auto& s : *r->schedule_switches) {
        chart.markers.push_back(
            {static_cast<double>(s.step), std::string("switch ").append(std::to_string(s.step)),
             label + ": stage " + std::to_string(s.stage) + " (" + s.recipe_label.value_or("?") +
                 ") from step " + std::to_string(s.step),
             chart.series.back().color});
      }
    }
  }
  return chart;
}

// One operand row per (layer, tensor): input and weight as read by fprop, grad_output by dgrad.
bool is_primary_operand(const LayerRow& row) {
  return (*row.tensor == "grad_output") ? *row.gemm == "dgrad" : *row.gemm == "fprop";
}

LineChart layer_chart(const RunRecord& record, Field<double> LayerRow::*field,
                      const std::string& title, const std::string& y_label) {
  std::map<std::string, std::vector<std::pair<double, double>>> by_operand;
  for (const auto& row : *record.layers) {
    if (!is_primary_operand(row)) continue;
    const auto key = *row.layer + "." + *row.tensor;
    by_operand[key].emplace_back(static_cast<double>(row.step.value_or(0)),
                                 (row.*field).value_or(NAN));
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
std::vector<std::pair<double, double>> fraction_per_step(const RunRecord& record,
                                                         Field<std::int64_t> LayerRow::*field,
                                                         const std::string& only_tensor = "") {
  std::map<double, std::pair<double, double>> sums;  // step -> (field, count)
  for (const auto& row : *record.layers) {
    if (!only_tensor.empty() && *row.tensor != only_tensor) continue;
    auto& s = sums[static_cast<double>(row.step.value_or(0))];
    s.first += static_cast<double>((row.*field).value_or(0));
    s.second += static_cast<double>(row.count.value_or(0));
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
HeatmapChart divergence_heatmap_over(const std::vector<const RunRecord*>& ranked,
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
    if (*r->status == "finished" && rel) {
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
}  // namespace

std::vector<LineChart> loss_charts(const ReportInput& input, const ReportFacts& facts) {
  const auto& ranked = facts.ranked;
  const auto& floors = facts.floors;
  std::vector<LineChart> charts;
  charts.push_back(curves(
      input, ranked, floors, "eval loss", "eval loss", false,
      [](const RunRecord& r) { return series_of(r.eval, &EvalRow::loss); }, true));
  charts.push_back(curves(
      input, ranked, floors, "train loss (moving average of 10 steps)", "train loss", false,
      [](const RunRecord& r) { return moving_average(series_of(r.train, &TrainRow::loss), 10); },
      true));
  charts.push_back(curves(
      input, ranked, floors, "|eval loss - baseline| / baseline (log scale)", "relative difference",
      true,
      [](const RunRecord& r) {
        auto p = series_of(r.eval, &EvalRow::rel_diff);
        for (auto& xy : p) xy.second = std::fabs(xy.second);
        return p;
      },
      false));
  charts.push_back(curves(
      input, ranked, floors, "weight divergence vs baseline (relative L2)",
      "||w - w_baseline|| / ||w_baseline||", true,
      [](const RunRecord& r) { return series_of(r.eval, &EvalRow::weight_rel_l2); }, false));
  return charts;
}

std::optional<HeatmapChart> divergence_heatmap(const ReportInput& input, const ReportFacts& facts) {
  const auto axes = heatmap_axes(input);
  if (axes.size() != 2) return std::nullopt;
  return divergence_heatmap_over(facts.ranked, axes);
}

std::vector<std::vector<LineChart>> trajectory_charts(const ReportFacts& facts) {
  std::vector<const RunRecord*> with_layers;
  for (const auto* r : facts.ranked) {
    if (!r->layers->empty()) {
      with_layers.push_back(r);
    }
  }
  std::vector<const RunRecord*> focus;
  if (!with_layers.empty()) focus.push_back(with_layers.front());
  if (with_layers.size() > 1) focus.push_back(with_layers.back());
  std::vector<std::vector<LineChart>> charts;
  for (const auto* r : focus) {
    const auto label = run_label(*r) + " [" + run_verdict(*r, facts.floors.of(*r).tolerance) + "]";
    charts.push_back({layer_chart(*r, &LayerRow::amax, "amax per layer: " + label, "amax"),
                      layer_chart(*r, &LayerRow::scale_max, "scale per layer: " + label,
                                  "scale (q = cast(x * scale))")});
  }
  return charts;
}

std::vector<LineChart> underflow_charts(const ReportInput& input, const ReportFacts& facts) {
  const auto& ranked = facts.ranked;
  const auto& floors = facts.floors;
  std::vector<LineChart> charts;
  charts.push_back(curves(
      input, ranked, floors, "underflowed fraction of grad_output elements (log scale)", "fraction",
      true,
      [](const RunRecord& r) {
        return fraction_per_step(r, &LayerRow::underflowed, "grad_output");
      },
      false));
  charts.push_back(curves(
      input, ranked, floors, "underflowed fraction, all quantized elements (log scale)", "fraction",
      true, [](const RunRecord& r) { return fraction_per_step(r, &LayerRow::underflowed); },
      false));
  charts.push_back(curves(
      input, ranked, floors, "saturated fraction, all quantized elements (log scale)", "fraction",
      true, [](const RunRecord& r) { return fraction_per_step(r, &LayerRow::saturated); }, false));
  return charts;
}

}  // namespace fp8lab::experiments
