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
// beside (report_tables.hpp, report_head).
void summary(std::ostringstream& md, const ReportHead& head) {
  md << "# fp8lab report\n\n";
  if (!head.incomplete.empty()) md << "> **" << head.incomplete << "**\n\n";
  md << "Results from:";
  for (const auto& s : head.sources) md << " `" << s << "`";
  md << "\n\n" << head.counts;
  for (const auto& [v, n] : head.verdicts) md << ' ' << n << ' ' << v << ';';
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

}  // namespace

std::string render_markdown_report(const ReportInput& input) {
  const ReportFacts facts(input);
  std::ostringstream md;
  summary(md, report_head(input, facts));
  table_markdown(md, ranked_table(input, facts));
  resolution_list(md, facts);
  table_markdown(md, contrasts_table(input, facts));
  literature_section(md, facts);
  md << ablation_markdown(ablation_tables(input.records));
  table_markdown(md, noise_floor_table(input, facts));
  table_markdown(md, baselines_table(input));
  table_markdown(md, problems_table(input, facts));
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
