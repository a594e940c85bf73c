#include "experiments/report/svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace fp8lab::experiments {
namespace {

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string tick_label(double v) {
  char buffer[32];
  if (v != 0.0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) {
    std::snprintf(buffer, sizeof buffer, "%.0e", v);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4g", v);
  }
  return buffer;
}

// About `count` ticks at 1, 2 or 5 times a power of ten over [low, high].
std::vector<double> linear_ticks(double low, double high, int count) {
  std::vector<double> ticks;
  const double span = high - low;
  if (!(span > 0)) return {low};
  const double raw = span / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double v) {
    low = std::min(low, v);
    high = std::max(high, v);
  }
  bool empty() const { return !(low <= high); }
};

}  // namespace

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string series_color(std::size_t i) {
  // Tableau 10, then the same hues darker.
  static constexpr std::array<const char*, 20> colors = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
      "#ff9da7", "#9c755f", "#bab0ac", "#2c4f73", "#a85d14", "#9e2f31", "#3f7f7a",
      "#2f6b2a", "#a8892a", "#6f4466", "#c4646f", "#5f4330", "#77706c"};
  return colors[i % colors.size()];
}

namespace {

// One line of a line chart's legend: a group's heading, a series, or a group's "+N more".
struct LegendLine {
  std::string text;
  const ChartSeries* series = nullptr;  // null for headings and "+N more"
  bool heading = false;
};

std::vector<LegendLine> legend_lines(const std::vector<ChartSeries>& series) {
  std::vector<LegendLine> lines;
  std::size_t hidden = 0;
  auto close_group = [&](const std::string& group) {
    if (hidden > 0) {
      std::string text = "+";
      text.append(std::to_string(hidden)).append(" more ").append(group).append(" (hover a curve)");
      lines.push_back({text});
    }
    hidden = 0;
  };
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    if (i == 0 || s.group != series[i - 1].group) {
      if (i > 0) close_group(series[i - 1].group);
      if (!s.group.empty()) {
        std::size_t n = 0;
        for (std::size_t j = i; j < series.size() && series[j].group == s.group; ++j) ++n;
        lines.push_back({s.group + " (" + std::to_string(n) + ")", nullptr, true});
      }
    }
    if (s.in_legend) {
      lines.push_back({s.label.size() > 38 ? s.label.substr(0, 37) + "…" : s.label, &s});
    } else {
      ++hidden;
    }
  }
  if (!series.empty()) close_group(series.back().group);
  return lines;
}

// The y range a linear axis shows: [low, high] of the values, cut to the bulk when extremes lie
// more than 3 inter-percentile spans (5th to 95th) beyond it.
struct LinearCut {
  bool high_cut = false, low_cut = false;
  double high_value = 0, low_value = 0;  // the extremes beyond the cut
};

LinearCut cut_outliers(std::vector<double> ys, Range& yr) {
  LinearCut cut;
  if (ys.size() < 8) return cut;
  std::sort(ys.begin(), ys.end());
  const double p05 = ys[ys.size() / 20], p95 = ys[ys.size() - 1 - ys.size() / 20];
  const double span = std::max(p95 - p05, std::fabs(p95) * 1e-6);
  if (ys.back() > p95 + 3 * span) {
    cut.high_cut = true;
    cut.high_value = ys.back();
    yr.high = *(std::upper_bound(ys.begin(), ys.end(), p95 + 3 * span) - 1);
  }
  if (ys.front() < p05 - 3 * span) {
    cut.low_cut = true;
    cut.low_value = ys.front();
    yr.low = *std::lower_bound(ys.begin(), ys.end(), p05 - 3 * span);
  }
  return cut;
}

}  // namespace

std::string render_line_chart(const LineChart& chart, int width, int height) {
  const double left = 64, right = 250, top = 28, bottom = 44;
  const auto legend = legend_lines(chart.series);
  // Tall enough for the legend (14 px a line).
  height = std::max(height, static_cast<int>(top + 14 * static_cast<double>(legend.size()) + 16));
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto y_of = [&](double y) { return chart.log_y ? std::log10(y) : y; };
  auto usable = [&](double y) { return std::isfinite(y) && (!chart.log_y || y > 0); };

  Range xr, yr;
  std::vector<double> ys;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !usable(y)) continue;
      xr.add(x);
      yr.add(y_of(y));
      ys.push_back(y);
    }
  }
  std::ostringstream svg;
  svg << "<svg class=\"chart\" data-kind=\"line\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height
      << "\" role=\"img\" aria-label=\"" << escape_html(chart.title) << "\">\n";
  svg << "<text x=\"" << left << "\" y=\"16\" class=\"title\">" << escape_html(chart.title)
      << "</text>\n";
  if (xr.empty() || yr.empty()) {
    svg << "<text x=\"" << left + 10 << "\" y=\"" << top + plot_h / 2
        << "\" class=\"empty\">no data</text>\n</svg>\n";
    return svg.str();
  }
  const LinearCut cut = chart.log_y ? LinearCut{} : cut_outliers(ys, yr);
  if (xr.high == xr.low) xr.high = xr.low + 1;
  if (yr.high == yr.low) {
    yr.low -= chart.log_y ? 0.5 : std::max(1e-12, std::fabs(yr.low) * 0.05);
    yr.high += chart.log_y ? 0.5 : std::max(1e-12, std::fabs(yr.high) * 0.05);
  }
  const double pad = (yr.high - yr.low) * 0.04;
  yr.low -= pad;
  yr.high += pad;
  auto px = [&](double x) { return left + (x - xr.low) / (xr.high - xr.low) * plot_w; };
  // Values beyond a cut are drawn on the plot's edge.
  auto py = [&](double y) {
    const double v = std::clamp(y_of(y), yr.low, yr.high);
    return top + (yr.high - v) / (yr.high - yr.low) * plot_h;
  };

  // Axes, grid and tick labels.
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" class=\"frame\"/>\n";
  for (double t : linear_ticks(xr.low, xr.high, 6)) {
    svg << "<line x1=\"" << number(px(t)) << "\" x2=\"" << number(px(t)) << "\" y1=\"" << top
        << "\" y2=\"" << top + plot_h << "\" class=\"grid\"/><text x=\"" << number(px(t))
        << "\" y=\"" << top + plot_h + 14 << "\" class=\"tick\" text-anchor=\"middle\">"
        << tick_label(t) << "</text>\n";
  }
  std::vector<double> y_ticks;
  if (chart.log_y) {
    // Every k-th decade, so that at most ~7 labels share the axis.
    const double decades = std::floor(yr.high) - std::ceil(yr.low) + 1;
    const double every = std::max(1.0, std::ceil(decades / 7));
    for (double e = std::ceil(yr.low / every) * every; e <= yr.high; e += every) {
      y_ticks.push_back(std::pow(10.0, e));
    }
    if (y_ticks.size() < 2) {
      // Less than a decade: round values of the range itself (0.2, 0.22, 0.24), not 10^-0.7.
      y_ticks.clear();
      for (double t : linear_ticks(std::pow(10.0, yr.low), std::pow(10.0, yr.high), 4)) {
        if (t > 0) y_ticks.push_back(t);
      }
    }
  } else {
    y_ticks = linear_ticks(yr.low, yr.high, 5);
  }
  for (double t : y_ticks) {
    svg << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << number(py(t))
        << "\" y2=\"" << number(py(t)) << "\" class=\"grid\"/><text x=\"" << left - 4
        << "\" y=\"" << number(py(t) + 4) << "\" class=\"tick\" text-anchor=\"end\">"
        << tick_label(t) << "</text>\n";
  }
  // A cut axis: a zigzag break on the cut edge and the value beyond it.
  auto mark_cut = [&](double y_edge, double value, const char* arrow) {
    svg << "<path class=\"axis-break\" d=\"M" << left - 6 << ' ' << number(y_edge - 3)
        << " l4 6 l4 -6 l4 6\" "
        << "fill=\"none\" stroke=\"#cf222e\" stroke-width=\"1.5\"/><line x1=\"" << left
        << "\" x2=\"" << left + plot_w << "\" y1=\"" << number(y_edge) << "\" y2=\""
        << number(y_edge) << "\" stroke=\"#cf222e\" stroke-dasharray=\"2 3\"/><text x=\""
        << left + plot_w - 4 << "\" y=\"" << number(y_edge + (arrow[0] == 'u' ? 11 : -4))
        << "\" class=\"tick\" text-anchor=\"end\" fill=\"#cf222e\">axis cut: values "
        << (arrow[0] == 'u' ? "up to " : "down to ") << tick_label(value)
        << " drawn on this edge</text>\n";
  };
  if (cut.high_cut) mark_cut(top, cut.high_value, "up");
  if (cut.low_cut) mark_cut(top + plot_h, cut.low_value, "down");
  svg << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 8
      << "\" class=\"axis\" text-anchor=\"middle\">" << escape_html(chart.x_label) << "</text>\n";
  svg << "<text x=\"14\" y=\"" << top + plot_h / 2 << "\" class=\"axis\" text-anchor=\"middle\" "
      << "transform=\"rotate(-90 14 " << top + plot_h / 2 << ")\">" << escape_html(chart.y_label)
      << "</text>\n";

  // Lines (a non-finite or unusable point starts a new segment), each with its hover.
  for (const auto& s : chart.series) {
    std::string d;
    bool pen_down = false;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !usable(y)) {
        pen_down = false;
        continue;
      }
      d += (pen_down ? " L" : " M") + number(px(x)) + ' ' + number(py(y));
      pen_down = true;
    }
    svg << "<path class=\"series\" d=\"" << d << "\" fill=\"none\" stroke=\"" << s.color
        << "\" stroke-width=\"" << s.stroke_width << '"'
        << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << "><title>"
        << escape_html(s.hover.empty() ? s.label : s.hover) << "</title></path>\n";
  }
  // The legend: group headings, the series shown by name, "+N more" per group.
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const auto& line = legend[i];
    const double ly = top + 6 + static_cast<double>(i) * 14;
    if (line.series != nullptr) {
      const auto& s = *line.series;
      svg << "<line x1=\"" << width - right + 10 << "\" x2=\"" << width - right + 28
          << "\" y1=\"" << ly << "\" y2=\"" << ly << "\" stroke=\"" << s.color
          << "\" stroke-width=\"" << std::max(2.0, s.stroke_width) << '"'
          << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << "/>";
    }
    svg << "<text x=\"" << width - right + (line.series != nullptr ? 32 : 10) << "\" y=\""
        << ly + 4 << "\" class=\"legend" << (line.heading ? " legend-group" : "") << "\">"
        << escape_html(line.text);
    if (line.series != nullptr) {
      svg << "<title>" << escape_html(line.series->hover.empty() ? line.series->label
                                                                  : line.series->hover)
          << "</title>";
    }
    svg << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string render_heatmap(const HeatmapChart& chart, int cell_width, int cell_height) {
  const int left = 150, top = 48, legend = 72;
  // Columns wide enough for their labels (about 6 px per character at 10 px).
  for (const auto& x : chart.x_values) {
    cell_width = std::max(cell_width, static_cast<int>(6 * x.size()) + 12);
  }
  const int columns = static_cast<int>(chart.x_values.size());
  const int rows = static_cast<int>(chart.y_values.size());
  // Wide enough for the title (about 7.3 px per character at 13 px bold) and the two legend lines
  // (about 5.6 px per character at 10 px).
  const std::string no_run = "grey: no run; " + chart.broken_label;
  const int text_width = std::max(
      static_cast<int>(7.3 * static_cast<double>(chart.title.size())) + 16,
      left + static_cast<int>(5.6 * static_cast<double>(
                                        std::max(chart.value_label.size() + 60, no_run.size()))));
  const int width = std::max(left + columns * cell_width + 20, text_width);
  const int height = top + rows * cell_height + legend;
  Range range;
  for (const auto& row : chart.values) {
    for (const auto& v : row) {
      if (v && std::isfinite(*v)) range.add(*v);
    }
  }
  // Colour: white (best, the lowest value) to red (worst), on a log scale when values span more
  // than a decade, so that 0.1% and 1% differ visibly.
  const bool log_scale = !range.empty() && range.low > 0 && range.high / range.low > 10;
  auto fraction = [&](double v) {
    if (range.empty() || range.high == range.low) return 0.0;
    if (log_scale) return (std::log(v) - std::log(range.low)) / (std::log(range.high) - std::log(range.low));
    return (v - range.low) / (range.high - range.low);
  };
  auto color = [&](double f) {
    const int g = static_cast<int>(std::lround(245 - 180 * f));
    const int b = static_cast<int>(std::lround(240 - 200 * f));
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", 250, g, b);
    return std::string(buffer);
  };

  std::ostringstream svg;
  svg << "<svg class=\"chart\" data-kind=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height
      << "\" role=\"img\" aria-label=\"" << escape_html(chart.title) << "\">\n";
  svg << "<text x=\"8\" y=\"16\" class=\"title\">" << escape_html(chart.title) << "</text>\n";
  svg << "<text x=\"" << left + columns * cell_width / 2 << "\" y=\"34\" class=\"axis\" "
      << "text-anchor=\"middle\">" << escape_html(chart.x_label) << "</text>\n";
  svg << "<text x=\"8\" y=\"34\" class=\"axis\">" << escape_html(chart.y_label) << " \u2193</text>\n";
  for (int c = 0; c < columns; ++c) {
    svg << "<text x=\"" << left + c * cell_width + cell_width / 2 << "\" y=\"" << top - 4
        << "\" class=\"tick\" text-anchor=\"middle\">"
        << escape_html(chart.x_values[static_cast<std::size_t>(c)]) << "</text>\n";
  }
  for (int r = 0; r < rows; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    svg << "<text x=\"" << left - 6 << "\" y=\"" << top + r * cell_height + cell_height / 2 + 4
        << "\" class=\"tick\" text-anchor=\"end\">" << escape_html(chart.y_values[ur])
        << "</text>\n";
    for (int c = 0; c < columns; ++c) {
      const auto uc = static_cast<std::size_t>(c);
      const auto& v = chart.values[ur][uc];
      const std::string fill = !v ? "#eeeeee" : !std::isfinite(*v) ? "#7f0000" : color(fraction(*v));
      const std::string text = chart.texts[ur][uc];
      svg << "<rect class=\"cell\" x=\"" << left + c * cell_width << "\" y=\""
          << top + r * cell_height << "\" width=\"" << cell_width - 2 << "\" height=\""
          << cell_height - 2 << "\" fill=\"" << fill << "\"><title>"
          << escape_html(ur < chart.hovers.size() && uc < chart.hovers[ur].size() &&
                                 !chart.hovers[ur][uc].empty()
                             ? chart.hovers[ur][uc]
                             : chart.y_values[ur] + " / " + chart.x_values[uc] + ": " + text)
          << "</title></rect>\n";
      svg << "<text x=\"" << left + c * cell_width + cell_width / 2 - 1 << "\" y=\""
          << top + r * cell_height + cell_height / 2 + 3 << "\" class=\"celltext\" "
          << "text-anchor=\"middle\"" << (v && !std::isfinite(*v) ? " fill=\"#ffffff\"" : "")
          << ">" << escape_html(text) << "</text>\n";
    }
  }
  const int ly = top + rows * cell_height + 16;
  for (int i = 0; i <= 10; ++i) {
    svg << "<rect x=\"" << left + i * 16 << "\" y=\"" << ly << "\" width=\"16\" height=\"10\" "
        << "fill=\"" << color(i / 10.0) << "\"/>";
  }
  svg << "\n<text x=\"" << left << "\" y=\"" << ly + 24 << "\" class=\"tick\">"
      << escape_html(chart.value_label)
      << (range.empty() ? std::string()
                        : ": " + chart.format_value(range.low) + " (white) to " +
                              chart.format_value(range.high) + " (red)" +
                              (log_scale ? ", log scale" : ""))
      << "</text>\n<text x=\"" << left << "\" y=\"" << ly + 38 << "\" class=\"tick\">"
      << escape_html(no_run) << "</text>\n</svg>\n";
  return svg.str();
}

}  // namespace fp8lab::experiments
