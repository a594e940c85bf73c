#include "experiments/render/markdown_report.hpp"
#include "experiments/stats/incomplete_sweep.hpp"

#include <map>
#include <sstream>

#include "experiments/render/layer_stats_report.hpp"
#include "experiments/render/report_layout.hpp"
#include "experiments/render/report_tables.hpp"
#include "experiments/stats/ablation.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/stats/first_non_finite.hpp"
#include "experiments/stats/literature_effects.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/report_facts.hpp"
#include "experiments/stats/run_provenance.hpp"

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
// beside (report_tables.hpp, report_head).
void summary(std::ostringstream& md, const ReportHead& head) {
  md << "# fp8lab report\n\n";
  if (!head.incomplete.empty()) md << "> **" << head.incomplete << "**\n\n";
  md << "Results from:";
  for (const auto& s : head.sources) md << " `" << s << "`";
  md << "\n\n" << head.counts;
  for (const auto& [v, text] : head.verdicts) md << ' ' << text << ';';
  md << ' ' << head.rules << "\n\nScale of the runs:\n\n";
  for (const auto& line : head.scale) md << "- " << cell(line) << "\n";
  md << "\nThe tests:\n\n";
  for (const auto& line : head.legend) md << "- " << cell(line) << "\n";
  md << "\n" << cell(head.families) << "\n\n";
  for (const auto& line : head.floors) md << "- " << cell(line) << "\n";
}

// A report table (report_tables.hpp) as a pipe table: the detail of a flagged cell becomes a
// numbered footnote below it, a flagged cell is bold.
void table_markdown(std::ostringstream& md, const ReportTable& table) {
  if (table.rows.empty() && table.empty.empty()) return;
  md << "\n## " << table.title << "\n\n";
  if (table.rows.empty()) {
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
        // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on the
        // const char* + std::string&& chain this was.
        if (!shown.empty()) shown += ' ';
        shown.append("[`").append(text).append("`](").append(href).append(")");
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

// report.md's canvas (report_layout.hpp): no charts.
class MarkdownCanvas final : public ReportCanvas {
 public:
  void head(const ReportHead& h) override { summary(md, h); }
  void table(const ReportTable& t) override { table_markdown(md, t); }
  void resolution(const ReportFacts& facts) override { resolution_list(md, facts); }
  void literature(const ReportFacts& facts) override { literature_section(md, facts); }
  void ablation(const ReportInput& input) override {
    md << ablation_markdown(ablation_tables(input.records));
  }
  void charts(const ReportInput&, const ReportFacts&) override {}
  void line_charts(const std::vector<LineChart>&) override {}
  void heatmap(const HeatmapChart&, const ReportTable& as_table) override {
    table_markdown(md, as_table);
  }
  void layer_stats(const ReportInput& input) override {
    if (const auto text = render_layer_stats_markdown(input); !text.empty()) md << '\n' << text;
  }
  void notes(const std::vector<std::string>& notes) override {
    md << "\n## Notes\n\n";
    for (const auto& n : notes) md << "- " << cell(n) << "\n";
  }
  std::ostringstream md;
};

}  // namespace

std::string render_markdown_report(const ReportInput& input, const ReportFacts& facts) {
  MarkdownCanvas canvas;
  draw_report(input, facts, canvas);
  return canvas.md.str();
}

std::string render_markdown_report(const ReportInput& input) {
  return render_markdown_report(input, ReportFacts(input));
}

}  // namespace fp8lab::experiments
