// Workload options (experiments/workloads/workload_options.hpp, workload_catalog.hpp): specs and
// their canonical text, the errors for unknown options and bad values, the ids of workloads
// without options (unchanged from before options existed), and sweep files' workload entries.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "experiments/run/run_ids.hpp"
#include "experiments/workloads/workload_catalog.hpp"
#include "recipes/error.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments {

TEST_CASE("A spec's canonical text drops defaults, sorts keys and spells values one way",
          "[workloads]") {
  CHECK(canonical_workload("gpt-small") == "gpt-small");
  CHECK(canonical_workload("llama-s:d_model=256") == "llama-s");  // the default
  CHECK(canonical_workload("llama-s:layers=6,d_model=384") == "llama-s:d_model=384,layers=6");
  CHECK(canonical_workload("llama-s: d_model = 0384 ") == "llama-s:d_model=384");
  CHECK(canonical_workload("llama-xs:lr=1e-3") == "llama-xs:lr=0.001");
  CHECK(canonical_workload("llama-xs:lr=0.0010") == "llama-xs:lr=0.001");
  CHECK(canonical_workload("llama-xs:fp8_head=1") == "llama-xs:fp8_head=true");
  CHECK(canonical_workload("residual-mlp:activation=swiglu,noise=0.005") ==
        "residual-mlp:activation=swiglu,noise=0.005");
  CHECK(canonical_workload(workload_spec_with("llama-s", {"d_model=384", "heads=8"})) ==
        "llama-s:d_model=384,heads=8");
  const auto resolved = resolve_workload("llama-s:d_model=384");
  CHECK(resolved.name == "llama-s");
  CHECK(resolved.values.integer("d_model") == 384);
  CHECK(resolved.values.integer("layers") == 4);
  CHECK(resolved.values.to_json()["d_model"] == 384);
  CHECK(resolved.values.to_json()["fp8_head"] == false);
}

TEST_CASE("Unknown options and bad values name the workload, the option and what is accepted",
          "[workloads]") {
  CHECK_THROWS_WITH(canonical_workload("llama-s:d_modle=384"),
                    Catch::Contains("workload llama-s: unknown option 'd_modle'") &&
                        Catch::Contains("accepted: layers, d_model, heads"));
  CHECK_THROWS_WITH(canonical_workload("llama-s:d_model=abc"),
                    Catch::Contains("option d_model='abc' is not accepted") &&
                        Catch::Contains("an integer from 2 to 65536"));
  CHECK_THROWS_WITH(canonical_workload("llama-s:layers=0"),
                    Catch::Contains("an integer from 1 to 1024"));
  CHECK_THROWS_WITH(canonical_workload("residual-mlp:activation=relu"),
                    Catch::Contains("one of gelu, swiglu"));
  CHECK_THROWS_WITH(canonical_workload("llama-s:lr=fast"), Catch::Contains("a number from 0"));
  CHECK_THROWS_WITH(canonical_workload("llama-s:d_model=384,d_model=512"),
                    Catch::Contains("given twice"));
  CHECK_THROWS_WITH(canonical_workload("llama-s:d_model"), Catch::Contains("not key=value"));
  CHECK_THROWS_WITH(canonical_workload("user-example:steps=3"),
                    Catch::Contains("this workload has no options"));
  CHECK_THROWS_WITH(canonical_workload("llama-xl"), Catch::Contains("unknown workload 'llama-xl'"));
}

TEST_CASE("Workloads without options keep their ids; options give distinct, file-safe ids",
          "[workloads]") {
  CHECK(baseline_run_id("gpt-small", 1, HighPrecision::fp32, std::nullopt) ==
        "baseline-gpt-small-seed1-fp32");
  CHECK(baseline_run_id(canonical_workload("llama-s:d_model=384,layers=6"), 0, HighPrecision::fp32,
                        100) == "baseline-llama-s.d_model-384.layers-6-seed0-fp32-steps100");
  CHECK(baseline_run_id(canonical_workload("llama-s:lr=1e-3"), 0, HighPrecision::bf16,
                        std::nullopt) == "baseline-llama-s.lr-0.001-seed0-bf16");
  recipes::Recipe recipe;
  CHECK(recipes::sweep_run_id(recipe, "llama-s", 0) !=
        recipes::sweep_run_id(recipe, canonical_workload("llama-s:d_model=384"), 0));
}

TEST_CASE("A sweep file's workloads take options as NAME:k=v or as a mapping", "[workloads]") {
  auto sweep = recipes::parse_sweep_text(
      "method: grid\n"
      "workloads: [gpt-small, 'llama-s:layers=6,d_model=384', {llama-s: {d_model: 384}},\n"
      "            {residual-mlp: {d: 64, activation: swiglu}}]\n"
      "parameters:\n  margin: {values: [0]}\n",
      "s.yaml");
  canonicalize_workloads(sweep.workloads, "s.yaml");
  CHECK(sweep.workloads == std::vector<std::string>{"gpt-small", "llama-s:d_model=384,layers=6",
                                                    "llama-s:d_model=384",
                                                    "residual-mlp:activation=swiglu,d=64"});
  auto bad = recipes::parse_sweep_text(
      "workloads: [{llama-s: {d_model: big}}]\nparameters:\n  margin: {values: [0]}\n", "b.yaml");
  CHECK_THROWS_WITH(canonicalize_workloads(bad.workloads, "b.yaml"),
                    Catch::Contains("b.yaml: workloads: workload llama-s: option d_model='big'"));
  CHECK_THROWS_AS(
      recipes::parse_sweep_text(
          "workloads: [{llama-s: 384}]\nparameters:\n  margin: {values: [0]}\n", "c.yaml"),
      recipes::RecipeError);
}

}  // namespace fp8lab::experiments
