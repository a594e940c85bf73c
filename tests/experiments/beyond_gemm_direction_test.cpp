// L3's direction at small scale (docs/literature.md, Su et al. 2025): on residual-mlp at the
// setting of recipes/sweeps/literature/L3-mx-layernorm.yaml, seed 2, MXFP8 with floor scales and
// LayerNorm parameters and GeLU MX-quantized goes unstable within 600 steps (the sweep saw its
// training loss pass 0.2 at step 424), while the paper's off-switches, LayerNorm in high precision
// and the exponent bump (rceil), stay where the baseline is. Direction only, never the paper's
// step. The runs are deterministic (sim is bit-exact), so a change of numerics that moves seed 2's
// trajectory fails this test: then rerun the sweep and pick the seed anew. About 2 minutes on one
// core (label torch, not fast).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/read_text.hpp"
#include "tests/support/run_to_end.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

// The largest training loss after step 200 of the FP8 run of `settings`, or of the baseline.
double max_train_loss_after_200(const fs::path& out, const std::vector<std::string>& settings) {
  std::vector<std::string> arguments = {
      FP8LAB_EXECUTABLE,
      "run",
      "--workload",
      "residual-mlp:d=64,batch=128,eval_batch=1024,eval_batches=2,eval_every=250,lr=0.02",
      "--steps",
      "600",
      "--seed",
      "2",
      "--out",
      out.string()};
  for (const auto& s : settings) {
    arguments.push_back("--set");
    arguments.push_back(s);
  }
  const auto log = out / ("run" + std::to_string(settings.size()) + ".log");
  REQUIRE(testing::run_to_end(arguments, log) == 0);
  double worst = 0.0;
  int fp8_records = 0;
  for (const auto& entry : fs::directory_iterator(out / "runs")) {
    const auto record = nlohmann::json::parse(testing::read_text(entry.path()));
    if (record["kind"] != "fp8") continue;
    ++fp8_records;
    for (const auto& row : record["train"]) {
      if (row["step"].get<int>() > 200) worst = std::max(worst, row["loss"].get<double>());
    }
  }
  REQUIRE(fp8_records == 1);
  return worst;
}

}  // namespace

TEST_CASE("L3 direction: floor with MX LayerNorm and GeLU goes unstable, the off-switches do not",
          "[beyond_gemm][literature]") {
  const auto dir = fs::temp_directory_path() / ("fp8lab-l3-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::vector<std::string> mxfp8 = {"scaling=mxfp8", "fp8_format=E4M3", "gemm.fprop=fp32_seq",
                                          "gemm.dgrad=fp32_seq", "gemm.wgrad=fp32_seq"};
  const auto arm = [&](const std::string& name, std::vector<std::string> extra) {
    extra.insert(extra.begin(), mxfp8.begin(), mxfp8.end());
    return max_train_loss_after_200(dir / name, extra);
  };
  const double unstable =
      arm("floor", {"mx_scale_mode=floor", "norm_affine_precision=mx", "activation_precision=mx"});
  const double bump =
      arm("rceil", {"mx_scale_mode=rceil", "norm_affine_precision=mx", "activation_precision=mx"});
  const double norm_high = arm("norm-high", {"mx_scale_mode=floor", "norm_affine_precision=high",
                                             "activation_precision=mx"});
  INFO("max training loss after step 200: floor/mx/mx " << unstable << ", rceil/mx/mx " << bump
                                                        << ", floor/high/mx " << norm_high);
  // The baselines of this setting stay below 0.04 (the sweep's three seeds).
  CHECK(unstable > 0.2);
  CHECK(bump < 0.1);
  CHECK(norm_high < 0.1);
  fs::remove_all(dir);
}

}  // namespace fp8lab::experiments
