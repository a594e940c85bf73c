// fp8lab report DIR [DIR...]: merges the run records of one or more output directories (shards of
// one sweep) and writes results.jsonl, summary.csv, report.md and report.html
// (experiments/render/write_reports.hpp). A corrupt or truncated record file is an error naming
// the file and line (exit 2), never skipped. Runs a sweep.json asked for that have no record make
// the report say at its top that the sweep is incomplete, and the command exit 3 (run_errors.hpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "experiments/cli/command_exit.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/cli/option_checks.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/results/io_error.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/sweep/run_errors.hpp"

namespace fp8lab::experiments::cli {

void add_report_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "report", "Merge the results of output directories (sweep shards) and write the reports");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto axes = std::make_shared<std::vector<std::string>>();
  auto prefer = std::make_shared<std::string>();
  command->add_option("DIR", *inputs, "output directories of fp8lab run / sweep")
      ->required()
      ->check(CLI::ExistingDirectory);
  command->add_option("--out", *out, "where the reports go (default: the first DIR)");
  list_option(command->add_option(
      "--heatmap-axes", *axes, "two recipe fields for the heatmap (default: the two most varied)"));
  command
      ->add_option("--prefer", *prefer,
                   "newest: of two different records of one run id, keep the newer (by "
                   "finished_at) and say which; without it they are refused")
      ->check(CLI::IsMember({"newest"}));
  command->callback([inputs, out, axes, prefer] {
    finish_command(
        "fp8lab report",
        [&] {
          ReportOptions options;
          for (const auto& d : *inputs) options.inputs.emplace_back(d);
          options.output = *out;
          options.heatmap_axes = list_items(*axes, "--heatmap-axes", "FIELD,FIELD");
          if (*prefer == "newest") options.conflicts = ConflictChoice::newest;
          const auto paths = write_reports(options);
          for (const auto& chosen : paths.chosen) {
            std::fprintf(stderr, "fp8lab report: %s\n", chosen.c_str());
          }
          std::fprintf(stderr, "fp8lab report: %zu records; %s, %s, %s, %s\n", paths.records,
                       paths.results_jsonl.c_str(), paths.summary_csv.c_str(),
                       paths.contrasts_csv.c_str(), paths.report_md.c_str());
          std::printf("%s\n", paths.report_html.string().c_str());
          if (!paths.missing.empty()) {
            std::fprintf(
                stderr,
                "fp8lab report: the sweep is incomplete: %zu requested runs have no record "
                "(e.g. %s): they errored, wait for a baseline that errored, have not run "
                "yet, or are another shard's; rerun fp8lab sweep with --resume (or merge "
                "every shard's directory)\n",
                paths.missing.size(), paths.missing.front().c_str());
          }
          return paths.missing.empty() ? 0 : kExitErrored;
        },
        [](const IoError& e) {
          return io_error_text("fp8lab report", e, "fix the cause and rerun");
        });
  });
}

}  // namespace fp8lab::experiments::cli
