// The fp8lab command: subcommands are registered from experiments/cli/.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "experiments/build_info.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/run/cpu_numerics.hpp"
#include "experiments/run/process_heap.hpp"

int main(int argc, char** argv) {
  fp8lab::experiments::keep_heap_across_steps();  // before LibTorch allocates anything
  // Before anything reaches LibTorch: ATen and MKL read their pins once, at their first kernel.
  if (const auto error = fp8lab::experiments::pin_cpu_numerics_from_environment(); !error.empty()) {
    std::fprintf(stderr, "fp8lab: %s\n", error.c_str());
    return 2;
  }
  CLI::App app{"fp8lab: FP8 training numerics, a bit-exact CPU reference and its CUDA twin"};
  app.require_subcommand(1);
  // "fp8lab 0.1.0 (git <commit>[, dirty])": what every run record stores (build_info.hpp).
  app.set_version_flag("--version", fp8lab::experiments::version_text());
  fp8lab::experiments::cli::add_formats_command(app);
  fp8lab::experiments::cli::add_explain_command(app);
  fp8lab::experiments::cli::add_check_command(app);
  fp8lab::experiments::cli::add_run_command(app);
  fp8lab::experiments::cli::add_sweep_command(app);
  fp8lab::experiments::cli::add_report_command(app);
  fp8lab::experiments::cli::add_literature_command(app);
  fp8lab::experiments::cli::add_quantize_command(app);
  fp8lab::experiments::cli::add_cpu_ops_command(app);
  return fp8lab::experiments::cli::parse_command_line(app, argc, argv);
}
