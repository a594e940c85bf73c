// fp8lab literature L1|L2: the GEMM-level literature experiments (docs/literature.md), each
// printing its table. L3-L5 are training sweeps (recipes/sweeps/literature/), run with
// `fp8lab sweep`.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "experiments/cli/commands.hpp"
#include "experiments/cli/option_checks.hpp"
#include "experiments/literature/gemm_accumulation.hpp"
#include "experiments/literature/scale_rounding.hpp"

namespace fp8lab::experiments::cli {
namespace {

void add_l1(CLI::App& literature) {
  auto* l1 = literature.add_subcommand(
      "L1", "DeepSeek-V3 §3.3: FP8 GEMM error over K for fp32_seq, hopper_fast, hopper_split");
  auto options = std::make_shared<literature::AccumulationOptions>();
  auto ks = std::make_shared<std::vector<std::string>>();
  list_option(l1->add_option("--k", *ks, "the K values (default 512,1024,2048,4096,8192,16384)"));
  l1->add_option("--rows", options->rows, "M = N of each GEMM (default 64)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
  l1->add_option("--seed", options->seed, "seed of the inputs (default 0)");
  l1->add_option("--threads", options->threads, "GEMM threads (default 1; bits never change)")
      ->check(CLI::Range(1, 256));
  l1->callback([options, ks] {
    const std::string accepted = "K[,K...], whole numbers from 1 to 1048576";
    if (!ks->empty()) options->ks.clear();
    for (const auto& k : list_items(*ks, "--k", accepted)) {
      std::int64_t value = 0;
      const auto [end, error] = std::from_chars(k.data(), k.data() + k.size(), value);
      if (error != std::errc() || end != k.data() + k.size() || value < 1 || value > (1 << 20)) {
        throw CLI::ValidationError("--k", "'" + k + "' is not accepted; expected " + accepted);
      }
      options->ks.push_back(value);
    }
    std::fputs(
        literature::format_accumulation_table(literature::measure_accumulation(*options)).c_str(),
        stdout);
  });
}

void add_l2(CLI::App& literature) {
  auto* l2 = literature.add_subcommand(
      "L2", "E8M0 scale rounding: clipped block maxima and their loss for floor/even/ceil/rceil");
  auto options = std::make_shared<literature::ScaleRoundingOptions>();
  l2->add_option("--rows", options->rows, "rows of each tensor (default 64)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}));
  l2->add_option("--k", options->k, "columns of each tensor, in MX blocks of 32 (default 4096)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  l2->add_option("--seed", options->seed, "seed of the inputs (default 0)");
  l2->callback([options] {
    std::fputs(literature::format_scale_rounding_table(literature::measure_scale_rounding(*options))
                   .c_str(),
               stdout);
  });
}

}  // namespace

void add_literature_command(CLI::App& app) {
  auto* literature = app.add_subcommand(
      "literature", "Published FP8 effects measured at GEMM level (docs/literature.md)");
  literature->require_subcommand(1);
  add_l1(*literature);
  add_l2(*literature);
}

}  // namespace fp8lab::experiments::cli
