#include "experiments/cli/shared_options.hpp"

#include "experiments/cli/option_checks.hpp"
#include "experiments/linear/cuda_backend.hpp"

namespace fp8lab::experiments::cli {

CLI::Option* add_backend_option(CLI::App& command, std::string& backend) {
  return command
      .add_option("--backend", backend,
                  "sim (CPU reference), cuda (Linears, model and batches on the GPU) or "
                  "cuda-staged (Linears on the GPU, model on the CPU: bit-identical to sim)")
      ->capture_default_str();
}

CLI::Option* add_baseline_precision_option(CLI::App& command, std::string& precision) {
  return command.add_option("--baseline-precision", precision,
                            "operands of the baseline's high-precision GEMMs: fp32 or bf16");
}

CLI::Option* add_threads_option(CLI::App& command, int& threads, const std::string& help) {
  return command.add_option("--threads", threads, help)
      ->check(whole_number_between(1, kMaxRunThreads,
                                   "threads per run; above the core count they share cores"));
}

CLI::Option* add_steps_option(CLI::App& command, std::int64_t& steps, const std::string& help) {
  return command.add_option("--steps", steps, help)->check(whole_number_at_least(1));
}

CLI::Option* add_shadow_every_option(CLI::App& command, std::int64_t& every,
                                     const std::string& more_help) {
  return command
      .add_option("--shadow-every", every,
                  "replay every N-th step through sim and count mismatches (0: off)" + more_help)
      ->check(whole_number_at_least(0));
}

}  // namespace fp8lab::experiments::cli
