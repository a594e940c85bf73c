// The options that `fp8lab run` and `fp8lab sweep` both take (a sweep hands them on to each run),
// declared once so that their words, checks and help cannot differ between the two commands.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace fp8lab::experiments::cli {

// --backend: sim, cuda or cuda-staged (experiments/linear/cuda_backend.hpp checks the word).
CLI::Option* add_backend_option(CLI::App& command, std::string& backend);
// --baseline-precision: fp32 or bf16.
CLI::Option* add_baseline_precision_option(CLI::App& command, std::string& precision);
// --threads: 1 to kMaxRunThreads threads of one run's sim GEMMs and quantizers; `help` says
// what the command does without it.
CLI::Option* add_threads_option(CLI::App& command, int& threads, const std::string& help);
// --steps: a whole number >= 1 that overrides the workload's steps; `help` says whose.
CLI::Option* add_steps_option(CLI::App& command, std::int64_t& steps, const std::string& help);
// --shadow-every N >= 0: replay every N-th step through sim and count mismatches (0: off);
// `more_help` is appended to those words (what the command does with the counts).
CLI::Option* add_shadow_every_option(CLI::App& command, std::int64_t& every,
                                     const std::string& more_help);

}  // namespace fp8lab::experiments::cli
