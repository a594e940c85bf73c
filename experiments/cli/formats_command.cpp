#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "experiments/cli/commands.hpp"
#include "sim/format.hpp"

namespace fp8lab::experiments::cli {

void add_formats_command(CLI::App& app) {
  auto* command = app.add_subcommand("formats", "Print the element formats and their limits");
  command->callback([] {
    using sim::Format;
    std::printf("%-5s %-6s %5s %14s %14s %s\n", "name", "layout", "bias", "max finite",
                "min subnormal", "inf/nan");
    for (auto f :
         {Format::E4M3, Format::E5M2, Format::E8M0, Format::E2M3, Format::E3M2, Format::E2M1}) {
      const auto& s = sim::spec(f);
      std::printf("%-5s e%dm%d   %5d %14.6g %14.6g %s/%s\n", s.name, s.exponent_bits,
                  s.mantissa_bits, s.bias, s.max_finite(),
                  std::ldexp(1.0, s.min_subnormal_exponent()), s.has_inf() ? "inf" : "-",
                  s.has_nan() ? "nan" : "-");
    }
  });
}

}  // namespace fp8lab::experiments::cli
