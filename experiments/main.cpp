// The fp8lab command: subcommands are registered from experiments/cli/.
#include <malloc.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "experiments/build_info.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/run/cpu_numerics.hpp"

int main(int argc, char** argv) {
  // glibc's heap kept across training steps (docs/performance.md "The step's page faults"): with
  // the defaults, the tensors and buffers a step frees are returned to the kernel (the heap's top
  // trimmed past 128 KiB, or each block of more than the dynamic threshold its own mmap) and the
  // next step faults the same pages in again, zeroed. Blocks up to 32 MiB come from the heap and
  // up to 512 MiB of free memory stays at its top. No bit depends on it. The benchmarks set the
  // same (bench/bench_main.cpp).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
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
