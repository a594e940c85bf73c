// The report's tables, decided once: which columns, which rows in which order, every cell's text,
// and what explains a short cell. report.html (html_report.cpp) and report.md
// (markdown_report.cpp) only draw them: HTML as <table> (the explanation on hover, a verdict cell
// coloured by its word), Markdown as a pipe table (the explanation as a numbered footnote). A new
// column is one entry in `columns` and one cell per row here (docs/architecture.md, "How to
// add ..."). No LibTorch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

struct ReportCell {
  std::string text;
  bool numeric = false;  // right-aligned
  bool code = false;     // an identifier, set in monospace
  std::string verdict;   // a verdict cell's word (recipe_rows.hpp), which HTML colours
  std::string detail;    // the full text behind a short cell ("" when the cell says it all)
  bool flagged = false;  // worth the reader's attention (the peer would run something else)
  std::vector<std::pair<std::string, std::string>> links;  // (text, href): the cell is links
};

struct ReportTable {
  std::string title;
  std::string note;  // how to read it, one paragraph
  std::vector<std::string> columns;
  std::vector<std::vector<ReportCell>> rows;
  std::string empty;  // said instead of the table when it has no rows
};

// A cell of text, and a right-aligned one (a number).
ReportCell text_cell(std::string text);
ReportCell number_cell(std::string text);

// "+0.52% [+0.31%, +0.73%] (n=3)", or "-" for no interval: every interval cell of the report.
std::string interval_text(const std::optional<MeanInterval>& interval);

// One line per recipe over its seeds, best first (recipe_rows.hpp).
ReportTable ranked_table(const ReportInput& input, const ReportFacts& facts);
// Recipes against each other on the same seeds (contrasts.hpp).
ReportTable contrasts_table(const ReportInput& input, const ReportFacts& facts);
// Each FP8 run's own timings (the record's `throughput`).
ReportTable throughput_table(const ReportFacts& facts);
// Per arm (baselines, null runs, each recipe): its unstable count with its Clopper-Pearson
// interval and Fisher's exact test against its baselines (instability_counts.hpp); no rows when
// the records carry no instability rule.
ReportTable instability_table(const ReportFacts& facts);
// Per contrast: both recipes' unstable counts and Fisher's exact test.
ReportTable instability_contrasts_table(const ReportFacts& facts);
// The baselines and null runs, one line each.
ReportTable baselines_table(const ReportInput& input);
// Per baseline family: its seeds' final eval losses and the unpaired noise floor (context).
ReportTable noise_floor_table(const ReportInput& input, const ReportFacts& facts);
// The FP8 runs that diverged, errored, failed to train or hit a non-finite value, and where.
ReportTable problems_table(const ReportInput& input, const ReportFacts& facts);

// The report's head, in words: what it read, the verdict counts, the scale, the tests and the
// floors each verdict stands beside.
struct ReportHead {
  std::string incomplete;  // incomplete_sweep.hpp; "" when every requested run has a record
  std::vector<std::string> sources;
  std::string counts;  // "12 FP8 runs in 4 recipe rows:"
  // Per verdict word: the word and its count in words, "2 worse after Holm (3 at raw alpha)" for
  // a word from a named test, "1 inconclusive" / "2 diverged" otherwise.
  std::vector<std::pair<std::string, std::string>> verdicts;
  std::string rules;                       // paired_verdict_rules()
  std::vector<std::string> scale, legend;  // ReportFacts'
  std::string families;                    // ReportFacts'
  std::vector<std::string> floors;         // chaos floors, then noise floors
};
ReportHead report_head(const ReportInput& input, const ReportFacts& facts);

}  // namespace fp8lab::experiments
