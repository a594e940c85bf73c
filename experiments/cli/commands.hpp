// The fp8lab subcommands. Each add_*_commands function lives in its own file under cli/ and adds
// its subcommands to the app; main.cpp calls them all.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace fp8lab::experiments::cli {

void add_formats_command(CLI::App& app);  // formats: the element formats and their limits
void add_explain_command(CLI::App& app);  // explain: recipe, TE-effective recipe, dropped fields
void add_check_command(CLI::App& app);    // check: every GPU kernel against sim/, as a table
void add_run_command(CLI::App& app);      // run: one workload x one recipe beside its baseline
void add_sweep_command(CLI::App& app);    // sweep: every distinct run of a sweep file, then report
void add_report_command(CLI::App& app);   // report: merge output directories, write the reports
void add_literature_command(CLI::App& app);  // literature L1|L2: GEMM-level published effects
void add_quantize_command(CLI::App& app);    // quantize: .npy tensors as a peer stores them
// quantize's options and callback on `command` (a subcommand, or fp8lab-quantize's whole app);
// `name` begins its messages.
void add_quantize_options(CLI::App& command, const std::string& name);
void add_cpu_ops_command(CLI::App& app);

// Parses argc/argv into `app` (which runs the chosen command's callback) and returns the process's
// exit code: 0; a command's own failure (CLI::RuntimeError) keeps its code; a usage error (unknown
// flag, a value an option check refuses, --a excludes --b) is 2, as every other bad input, instead
// of CLI11's 1xx codes. fp8lab's main and fp8lab-quantize's end with it (command_exit.cpp).
int parse_command_line(CLI::App& app, int argc,
                       char** argv);  // cpu-ops: the bits of LibTorch's CPU ops, to diff

}  // namespace fp8lab::experiments::cli
