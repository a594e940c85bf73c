// fp8lab-quantize: `fp8lab quantize` as a program of its own (the same flags, without the word
// quantize). It links sim, recipes, the .npy reader and the results files' writer but not LibTorch,
// whose loading is most of fp8lab's start-up (experiments/CMakeLists.txt, fp8lab_quantize_cli).
#include <CLI/CLI.hpp>

#include "experiments/cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "fp8lab-quantize: quantize fp32 or bf16 .npy tensors (one, or a stack) as a peer does and "
      "write what it stores; the same as `fp8lab quantize`, without LibTorch"};
  fp8lab::experiments::cli::add_quantize_options(app, "fp8lab-quantize");
  return fp8lab::experiments::cli::parse_command_line(app, argc, argv);
}
