// fp8lab cpu-ops: the bits of the LibTorch CPU ops a training run calls, one line each, to diff
// two machines (run both under the same FP8LAB_CPU_NUMERICS; docs/architecture.md, "Bits across
// processors"). --trace WORKLOAD instead lists the ATen ops that a few of the workload's baseline
// training steps and their evals call, with counts, and marks those the hashed list does not cover.
#include <torch/torch.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <set>
#include <string>

#include "experiments/cli/commands.hpp"
#include "experiments/run/cpu_numerics.hpp"
#include "experiments/run/cpu_ops.hpp"

namespace fp8lab::experiments::cli {

void add_cpu_ops_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "cpu-ops", "Hash the output bits of the LibTorch CPU ops a training run calls (diff two "
                 "machines), or --trace the ops a workload calls");
  struct Options {
    std::string trace;
    std::int64_t steps = 2;
  };
  auto options = std::make_shared<Options>();
  command->add_option("--trace", options->trace,
                      "list the ATen ops a workload's baseline calls (WORKLOAD[:options])");
  command->add_option("--steps", options->steps, "with --trace: training steps (eval included)")
      ->check(CLI::Range(1, 1000));
  command->callback([options] {
    torch::set_num_threads(1);
    std::printf("# %s\n", to_json(machine_facts()).dump().c_str());
    if (options->trace.empty()) {
      for (const auto& op : hash_cpu_ops()) std::printf("%s\n", cpu_op_line(op).c_str());
      return;
    }
    std::set<std::string> covered;
    for (const auto& entry : cpu_op_entries())
      covered.insert(entry.covers.begin(), entry.covers.end());
    const auto& exempt = cpu_ops_without_arithmetic();
    for (const auto& [op, count] : trace_cpu_ops(options->trace, options->steps)) {
      const char* mark = covered.contains(op)  ? "hashed"
                         : exempt.contains(op) ? "no arithmetic"
                                               : "NOT COVERED";
      std::printf("%s\t%lld\t%s\n", op.c_str(), static_cast<long long>(count), mark);
    }
  });
}

}  // namespace fp8lab::experiments::cli
