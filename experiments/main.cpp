// The fp8lab command.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "sim/format.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fp8lab: FP8 training numerics, CPU reference and CUDA twin"};
  app.require_subcommand(1);
  auto* formats = app.add_subcommand("formats", "Print the element formats fp8lab knows");
  formats->callback([] {
    using fp8lab::sim::spec;
    for (auto f : {fp8lab::sim::Format::E4M3, fp8lab::sim::Format::E5M2, fp8lab::sim::Format::E8M0}) {
      const auto& s = spec(f);
      fmt::print("{:6} e{}m{} bias {:3} max {}\n", s.name, s.exponent_bits, s.mantissa_bits, s.bias,
                 s.max_finite());
    }
    fmt::print("LibTorch {}\n", TORCH_VERSION);
  });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
