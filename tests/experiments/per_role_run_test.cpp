// Issue 43 item 1: a per_role recipe file (recipes/configs/recipe-per-role-nvfp4-mlp-mxfp8-
// attention.yaml: NVFP4 on llama's MLP Linears, MXFP8 on the attention Linears) trains llama-xs
// through the fp8lab command; its record names each Linear's plans per role (fp8_plans);
// `fp8lab explain` prints them; an unknown role exits 2 naming file, line, field and the roles;
// a pattern that matches no Linear is a warning in the run's log, and the run goes on.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

const std::string kConfig = std::string(FP8LAB_SOURCE_DIR) +
                            "/recipes/configs/recipe-per-role-nvfp4-mlp-mxfp8-attention.yaml";

const nlohmann::json* fp8_record(const std::map<std::string, nlohmann::json>& records) {
  for (const auto& [id, record] : records) {
    if (record.at("kind") == "fp8") return &record;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a per_role recipe trains llama-xs; the record names each Linear's plans per role",
          "[per_role]") {
  const testing::Scratch dir("per-role");
  // An extra rule whose pattern names no llama Linear: a warning, not an error.
  const std::string recipe = testing::read_text(kConfig) +
                             "  - match: 'lm_head'\n    roles: [wgrad_input]\n"
                             "    mx_scale_mode: floor\n";
  REQUIRE(recipe.find("per_role:") != std::string::npos);
  testing::write_text(dir / "r.yaml", recipe);
  const auto log = dir / "run.log";
  REQUIRE(
      testing::run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "llama-xs", "--steps", "6",
                           "--recipe", kConfig, "--threads", "2", "--out", (dir / "d").string()},
                          log) == 0);
  const auto records = testing::records(dir / "d");
  const nlohmann::json* record = fp8_record(records);
  REQUIRE(record != nullptr);
  INFO(testing::read_text(log));
  CHECK(record->at("status") == "finished");
  REQUIRE(record->at("train").size() == 6);
  for (const auto& row : record->at("train")) CHECK(std::isfinite(row.at("loss").get<double>()));
  const auto& plans = record->at("fp8_plans");
  // Every converted Linear has its six roles.
  CHECK(plans.size() == record->at("fp8_layers").size());
  for (const auto& [layer, roles] : plans.items()) {
    INFO(layer);
    CHECK(roles.size() == 6);
    const bool mlp = layer.find(".mlp.") != std::string::npos;
    const std::string want = mlp ? "nvfp4 e2m1" : "mx e4m3";
    CHECK(roles.at("fprop_input").get<std::string>().rfind(want, 0) == 0);
  }
  CHECK(plans.at("block0.mlp.gate_proj").at("fprop_weight") == "nvfp4 e2m1 16x16 rowwise te");
  CHECK(plans.at("block0.mlp.gate_proj").at("wgrad_input") == "nvfp4 e2m1 16x1 columnwise te rht");
  CHECK(plans.at("block0.mlp.gate_proj").at("dgrad_grad_output") ==
        "nvfp4 e2m1 1x16 rowwise te sr");
  CHECK(plans.at("block0.attention.q_proj").at("dgrad_grad_output") ==
        "mx e5m2 1x32 rowwise te torchao-0.18");
  CHECK_THAT(
      record->at("recipe_canonical").get<std::string>(),
      Catch::Contains(";per_role=[{match: [\"block\\\\d+\\\\.mlp\\\\..*\"], scaling: nvfp4"));

  // The same recipe with a rule no Linear matches: the log warns, the run trains.
  const auto warn_log = dir / "warn.log";
  REQUIRE(testing::run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "llama-xs", "--steps", "1",
                               "--recipe", (dir / "r.yaml").string(), "--threads", "2", "--out",
                               (dir / "w").string()},
                              warn_log) == 0);
  CHECK_THAT(testing::read_text(warn_log),
             Catch::Contains("warning: per_role pattern 'lm_head' matches none of the model's"));
}

TEST_CASE("fp8lab explain prints the per_role plans; an unknown role exits 2", "[per_role]") {
  const testing::Scratch dir("per-role-explain");
  const auto log = dir / "explain.log";
  REQUIRE(testing::run_to_end({FP8LAB_EXECUTABLE, "explain", kConfig}, log) == 0);
  const std::string text = testing::read_text(log);
  CHECK_THAT(text, Catch::Contains("per_role: 1 rule"));
  CHECK_THAT(text, Catch::Contains("fprop_weight       nvfp4 e2m1 16x16 rowwise te"));
  CHECK_THAT(text, Catch::Contains("wgrad_grad_output  nvfp4 e2m1 16x1 columnwise te rht sr"));

  testing::write_text(dir / "bad.yaml",
                      "scaling: mxfp8\nper_role:\n  - roles: [fprop_inputs]\n    scaling: nvfp4\n");
  const auto bad_log = dir / "bad.log";
  CHECK(testing::run_to_end({FP8LAB_EXECUTABLE, "explain", (dir / "bad.yaml").string()}, bad_log) ==
        2);
  const std::string bad = testing::read_text(bad_log);
  CHECK_THAT(bad, Catch::Contains("bad.yaml:3: per_role[0].roles: unknown role 'fprop_inputs'"));
  CHECK_THAT(bad, Catch::Contains("fprop_input, fprop_weight, dgrad_grad_output, dgrad_weight, "
                                  "wgrad_input, wgrad_grad_output"));
}

}  // namespace fp8lab::experiments
