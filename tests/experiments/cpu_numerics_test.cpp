// Issue 31 item 10: every record says which CPU numerics it ran with (experiments/run/
// cpu_numerics.hpp): the processor, the mode, ATen's kernels, MKL's branch and sim's SIMD target;
// FP8LAB_CPU_NUMERICS=portable pins LibTorch before its first kernel, a bad mode or a conflicting
// pin is exit 2; and the report names a paired comparison whose records ran on different CPU
// numerics (experiments/stats/cross_machine.hpp). Tiny runs: the mlp workload, 2 steps.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/stats/cross_machine.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnvironment;
using testing::Scratch;
using testing::typed;

// The "machine" objects of the FP8 record and the baseline of a 2-step mlp run into `out`, after
// checking that the run exited 0.
std::vector<nlohmann::json> machines_of_run(const fs::path& out) {
  REQUIRE(testing::run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2",
                               "--set", "scaling=current", "--out", (out / "d").string()},
                              out / "run.log") == 0);
  std::vector<nlohmann::json> machines;
  for (const auto& [id, record] : testing::records(out / "d")) {
    INFO(id << ": " << record.dump().substr(0, 400));
    REQUIRE(record.contains("machine"));
    machines.push_back(record["machine"]);
  }
  REQUIRE(machines.size() == 2);
  CHECK(machines[0] == machines[1]);
  return machines;
}

}  // namespace

TEST_CASE("a record names its processor, the CPU numerics mode, ATen's and MKL's paths and sim's",
          "[cpu_numerics]") {
  const ScopedEnvironment unset({{"FP8LAB_CPU_NUMERICS", std::nullopt},
                                 {"ATEN_CPU_CAPABILITY", std::nullopt},
                                 {"MKL_CBWR", std::nullopt}});
  const Scratch dir("cpu-numerics-native");
  const auto machine = machines_of_run(dir).front();
  INFO(machine.dump());
  CHECK_FALSE(machine["cpu_model"].get<std::string>().empty());
  CHECK(machine["cpu_numerics"] == "native");
  CHECK_FALSE(machine["aten_cpu_capability"].get<std::string>().empty());
  CHECK(machine["mkl_cbwr"] == "AUTO");
  CHECK_FALSE(machine["sim_simd_target"].get<std::string>().empty());
}

TEST_CASE("FP8LAB_CPU_NUMERICS=portable pins ATen's default kernels and MKL's compatible branch",
          "[cpu_numerics]") {
  const testing::PortableNumerics portable;
  const Scratch dir("cpu-numerics-portable");
  const auto machine = machines_of_run(dir).front();
  INFO(machine.dump());
  CHECK(machine["cpu_numerics"] == "portable");
  CHECK(machine["aten_cpu_capability"] == "DEFAULT");
  CHECK(machine["mkl_cbwr"] == "COMPATIBLE");
}

TEST_CASE("a bad CPU numerics mode, or a pin that contradicts portable, is exit 2 with the reason",
          "[cpu_numerics]") {
  const Scratch dir("cpu-numerics-bad");
  {
    const ScopedEnvironment mode({{"FP8LAB_CPU_NUMERICS", "fastest"}});
    CHECK(testing::run_to_end({FP8LAB_EXECUTABLE, "formats"}, dir / "mode.log") == 2);
    CHECK_THAT(testing::read_text(dir / "mode.log"),
               Catch::Contains("FP8LAB_CPU_NUMERICS=fastest is not a CPU numerics mode: accepted "
                               "are native (the default) and portable"));
  }
  {
    const ScopedEnvironment pin(
        {{"FP8LAB_CPU_NUMERICS", "portable"}, {"ATEN_CPU_CAPABILITY", "avx2"}});
    CHECK(testing::run_to_end({FP8LAB_EXECUTABLE, "formats"}, dir / "pin.log") == 2);
    CHECK_THAT(testing::read_text(dir / "pin.log"),
               Catch::Contains("needs ATEN_CPU_CAPABILITY=default, but the environment sets "
                               "ATEN_CPU_CAPABILITY=avx2"));
  }
}

TEST_CASE("the report names each pair whose records ran on different CPU numerics",
          "[cpu_numerics][report]") {
  const nlohmann::json amd = {{"cpu_model", "AMD EPYC"},
                              {"cpu_numerics", "native"},
                              {"aten_cpu_capability", "AVX2"},
                              {"mkl_cbwr", "AUTO"},
                              {"sim_simd_target", "AVX2"}};
  auto intel = amd;
  intel["cpu_model"] = "Intel(R) Xeon(R)";
  intel["sim_simd_target"] = "AVX3";
  const auto records = [](const nlohmann::json& fp8, const nlohmann::json& baseline) {
    return std::vector<nlohmann::json>{
        {{"run_id", "base-s0"}, {"kind", "baseline"}, {"machine", baseline}},
        {{"run_id", "fp8-s0"}, {"kind", "fp8"}, {"baseline_run_id", "base-s0"}, {"machine", fp8}},
    };
  };
  // Same numerics: no note. sim's target alone never makes a difference.
  auto amd_avx3 = amd;
  amd_avx3["sim_simd_target"] = "AVX3";
  CHECK(cross_machine_notes(typed(records(amd, amd_avx3))).empty());
  // Native on two processors: one note naming both.
  const auto notes = cross_machine_notes(typed(records(intel, amd)));
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("run fp8-s0 ran on Intel(R) Xeon(R) (native: ATen AVX2, "
                                       "MKL AUTO), its baseline base-s0 on AMD EPYC"));
  // Portable on two processors: the same pins, so the same bits are promised.
  auto amd_portable = amd, intel_portable = intel;
  for (auto* m : {&amd_portable, &intel_portable}) {
    (*m)["cpu_numerics"] = "portable";
    (*m)["aten_cpu_capability"] = "DEFAULT";
    (*m)["mkl_cbwr"] = "COMPATIBLE";
  }
  CHECK(cross_machine_notes(typed(records(intel_portable, amd_portable))).empty());
  // Portable against native on one processor: different paths.
  CHECK(cross_machine_notes(typed(records(amd_portable, amd))).size() == 1);
  // Records from before the field: nothing is known, nothing is claimed.
  CHECK(cross_machine_notes(typed(records(nullptr, amd))).empty());
}

}  // namespace fp8lab::experiments
