// Issue 21: a run's record does not depend on its thread count. The same run (and its baseline,
// which fp8lab run trains first) at --threads 1 and --threads 2: every record field equal except
// the timings (throughput, started_at, finished_at), and the baseline archives equal byte for
// byte. A small llama (attention, RMSNorm, SwiGLU, grad clipping: every kind of op a llama step
// has) for a few steps, with recipes whose GEMMs and quantizers differ (Hopper and fp32_seq
// accumulation, per-tensor, block and MX scaling).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

// Few eval windows: the evaluations would otherwise be most of the test's time.
constexpr const char* kWorkload = "llama-xs:eval_windows=32";

// One `fp8lab run` of `recipe` at `threads` into `out`; its records' threads checked.
void run_at(const std::vector<std::string>& recipe, int threads, const fs::path& out) {
  std::vector<std::string> argv = {
      FP8LAB_EXECUTABLE,       "run",   "--workload", kWorkload, "--steps", "3", "--threads",
      std::to_string(threads), "--out", out.string()};
  for (const auto& setting : recipe) argv.insert(argv.end(), {"--set", setting});
  const auto log = out.string() + ".log";
  INFO(testing::read_text(log));
  REQUIRE(testing::run_to_end(argv, log) == 0);
  for (const auto& [id, record] : testing::records(out)) {
    CHECK(record["status"] == "finished");
    CHECK(record["throughput"]["threads"] == threads);
    CHECK(record["throughput"]["torch_threads"] == 1);
  }
}

TEST_CASE("a run's record is identical at 1 and 2 threads, timings aside", "[threads]") {
  const testing::Scratch dir("threads-rec");
  const std::vector<std::vector<std::string>> recipes = {
      {"scaling=current"},                       // Hopper accumulation, per tensor
      {"scaling=block", "gemm.fprop=fp32_seq"},  // 1x128 / 128x128 blocks
      {"scaling=mxfp8"},                         // MX 1x32 along each GEMM's K
  };
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    const auto one = dir / ("one-" + std::to_string(i)), two = dir / ("two-" + std::to_string(i));
    run_at(recipes[i], 1, one);
    run_at(recipes[i], 2, two);
    const auto a = testing::records(one, testing::kTimingFields),
               b = testing::records(two, testing::kTimingFields);
    REQUIRE(a.size() == 2);  // the baseline and the FP8 run
    REQUIRE(b.size() == a.size());
    for (const auto& [id, record] : a) {
      INFO("run " << id << " of " << recipes[i].front());
      REQUIRE(b.count(id) == 1);
      // The diff names the differing fields when the check fails.
      CHECK(nlohmann::json::diff(record, b.at(id)).dump() == "[]");
      // A check that can fail: the record holds the figures a thread-dependent sum would move.
      CHECK(record["final"]["eval_loss"].is_number());
    }
    for (const auto& entry : fs::directory_iterator(one / "baselines")) {
      const auto other = two / "baselines" / entry.path().filename();
      INFO(entry.path());
      CHECK(testing::read_text(entry.path()) == testing::read_text(other));
    }
  }
}

}  // namespace
}  // namespace fp8lab::experiments
