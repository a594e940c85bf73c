// The recipe field torchao_version (recipes/recipe.hpp): which torchao `to_mx` an MXFP8 recipe's
// torchao scale mode follows. Reading and errors, canonicalization, run ids (unchanged for every
// recipe it does not affect: digests taken before the field existed), sweeps over it, and what
// `fp8lab explain` and runs_as upstream say about it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "recipes/canonical.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/error.hpp"
#include "recipes/explain.hpp"
#include "recipes/fields.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/recipe_text.hpp"

using namespace fp8lab::recipes;

namespace {

const std::string kRoot = FP8LAB_SOURCE_DIR;

using fp8lab::testing::message_of;
using fp8lab::testing::recipe;

// FNV-1a 64 over the sorted run ids of a sweep, one per line (as printed by the program that
// took the digests below from commit fb76ad2, before torchao_version existed).
std::string sweep_digest(const std::string& sweep, std::size_t* runs) {
  const SweepExpansion e = expand(read_sweep(kRoot + "/recipes/sweeps/" + sweep + ".yaml"));
  std::vector<std::string> ids;
  // Seed 0 only: te-kwargs-gpt-small (the default sweep of fb76ad2) runs seeds 1 and 2 as well
  // since the paired verdicts (issue 20), and the ids of its seed-0 runs are still those from
  // before.
  for (const auto& run : e.runs) {
    if (run.seed == 0) ids.push_back(run.id);
  }
  std::sort(ids.begin(), ids.end());
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& id : ids) {
    for (unsigned char c : id + "\n") {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  }
  *runs = ids.size();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace

TEST_CASE("torchao_version: default torchao-0.18, written only where a torchao MX mode uses it",
          "[recipes][peer_versions]") {
  const Recipe floor = recipe("scaling: mxfp8\nmx_scale_mode: floor\n");
  CHECK(floor.torchao_version == TorchaoVersion::kV0_18);
  CHECK(uses_torchao_version(floor));
  CHECK(canonical_string(floor).find(";mx_scale_mode=floor;torchao_version=torchao-0.18;") !=
        std::string::npos);
  const Recipe main =
      recipe("scaling: mxfp8\nmx_scale_mode: floor\ntorchao_version: TORCHAO-MAIN\n");
  CHECK(main.torchao_version == TorchaoVersion::kMain);
  CHECK(canonical_string(main).find(";torchao_version=torchao-main;") != std::string::npos);
  CHECK(run_id(main) != run_id(floor));
  CHECK(describe(floor).find("torchao_version: torchao-0.18 (torchao v0.18.0's to_mx)\n") !=
        std::string::npos);
  CHECK(describe(main).find("torchao_version: torchao-main") != std::string::npos);
  CHECK(field_text(main, "torchao_version") == "torchao-main");
  for (const char* mode : {"ceil", "even", "rceil"}) {
    CHECK(uses_torchao_version(recipe(std::string("scaling: mxfp8\nmx_scale_mode: ") + mode)));
  }
  // Recipes it does not affect: no field in the string, none in describe.
  for (const char* yaml : {"scaling: mxfp8\n", "scaling: delayed\n", "scaling: rowwise\n",
                           "scaling: tensorwise\n", "scaling: block\n"}) {
    const Recipe r = recipe(yaml);
    INFO(yaml);
    CHECK_FALSE(uses_torchao_version(r));
    CHECK(canonical_string(r).find("torchao_version") == std::string::npos);
    CHECK(describe(r).find("torchao_version") == std::string::npos);
  }
  CHECK(parse_torchao_version("torchao-0.18") == TorchaoVersion::kV0_18);
  CHECK_FALSE(parse_torchao_version("0.18").has_value());
  CHECK(accepted_torchao_versions() == "torchao-0.18, torchao-main");
}

TEST_CASE(
    "torchao_version: bad values and misplaced fields name the file, field, value and choices",
    "[recipes][peer_versions]") {
  CHECK(message_of("scaling: mxfp8\nmx_scale_mode: floor\ntorchao_version: 0.18\n") ==
        "r.yaml:3: torchao_version: unknown value '0.18'; accepted: torchao-0.18, torchao-main");
  CHECK(message_of("scaling: mxfp8\nmx_scale_mode: floor\ntorchao_version: torchao-0.17\n") ==
        "r.yaml:3: torchao_version: unknown value 'torchao-0.17'; accepted: torchao-0.18, "
        "torchao-main (did you mean 'torchao-0.18'?)");
  CHECK(message_of("scaling: mxfp8\nmx_scale_mode: floor\ntorchao_version: [torchao-main]\n") ==
        "r.yaml:3: torchao_version: wrong type: expected one word, got 'a sequence'; "
        "accepted: torchao-0.18, torchao-main");
  CHECK(message_of("scaling: delayed\ntorchao_version: torchao-main\n") ==
        "r.yaml:2: torchao_version: applies to the MX torchao scale modes only, not to scaling "
        "'delayed'; value 'torchao-main'; accepted: an MX scaling (mxfp8, mxfp4, mxfp6_e2m3, "
        "mxfp6_e3m2) with mx_scale_mode: floor, ceil, even or rceil");
  CHECK(message_of("scaling: mxfp8\ntorchao_version: torchao-0.18\n") ==
        "r.yaml:2: torchao_version: applies to the MX torchao scale modes only, not to "
        "mx_scale_mode 'te' (TE's rule, no torchao version); value 'torchao-0.18'; accepted: "
        "an MX scaling (mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2) with mx_scale_mode: floor, ceil, "
        "even or rceil");
}

TEST_CASE("run ids of every recipe torchao_version does not affect are those from before it",
          "[recipes][peer_versions]") {
  // Digests printed at fb76ad2 (recipes/ of that commit, the same program as sweep_digest).
  struct Expected {
    const char* sweep;
    std::size_t runs;
    const char* digest;
  };
  for (const Expected& e : {Expected{"te-full-grid", 1701, "ae310ba7dc42f20f"},
                            // The default sweep of fb76ad2, since renamed (issue 20 §4).
                            Expected{"te-kwargs-gpt-small", 25, "814b11defd0117ec"},
                            Expected{"te-upstream", 2, "5481dc8ab3e5b487"},
                            Expected{"gpu-shadow", 4, "d66db1e436edf660"}}) {
    INFO(e.sweep);
    std::size_t runs = 0;
    CHECK(sweep_digest(e.sweep, &runs) == e.digest);
    CHECK(runs == e.runs);
  }
  const auto file_id = [](const char* name) {
    return run_id(read_recipe_file(kRoot + "/recipes/configs/" + name + ".yaml"));
  };
  CHECK(file_id("recipe-block") == "9b21425a728d0095");
  CHECK(file_id("recipe-delayed-wgrad-hp") == "fa01a88fc7a256a6");
  CHECK(file_id("recipe-rowwise") == "ec212a2b559b9abe");
  // An MXFP8 floor recipe now names its torchao version, so its id moved (its numerics did too:
  // the default is torchao-0.18, and the old id stood for main's rules).
  CHECK(file_id("recipe-mxfp8-floor") != "9adc64e6b964c0d1");
  CHECK(file_id("recipe-mxfp8-floor-torchao-main") != file_id("recipe-mxfp8-floor"));
}

TEST_CASE("sweeps over torchao_version: two runs for a torchao MX mode, one elsewhere, with why",
          "[recipes][peer_versions]") {
  const auto expand_text = [](const std::string& base) {
    return expand(parse_sweep_text("workloads: [w]\nbase: {" + base +
                                       "}\nparameters:\n  torchao_version: {values: [torchao-0.18, "
                                       "torchao-main]}\n",
                                   "s.yaml"));
  };
  const SweepExpansion floor = expand_text("scaling: mxfp8, mx_scale_mode: floor");
  CHECK(floor.requested.size() == 2);
  CHECK(floor.runs.size() == 2);
  CHECK(floor.runs[0].recipe.torchao_version != floor.runs[1].recipe.torchao_version);

  const SweepExpansion te = expand_text("scaling: mxfp8");
  REQUIRE(te.runs.size() == 1);
  CHECK(te.requested[1].reasons ==
        std::vector<std::string>{"torchao_version applies to the MX torchao scale modes (floor, "
                                 "ceil, even, rceil) only, not mx_scale_mode te"});
  const SweepExpansion delayed = expand_text("scaling: delayed");
  REQUIRE(delayed.runs.size() == 1);
  CHECK(delayed.requested[1].reasons ==
        std::vector<std::string>{"torchao_version applies to the MX torchao scale modes (floor, "
                                 "ceil, even, rceil) only, not delayed"});
  // The collapsed run is the canonical default, whichever request came first.
  CHECK(delayed.runs[0].recipe.torchao_version == TorchaoVersion::kV0_18);
  Recipe r = recipe("scaling: delayed\n");
  r.torchao_version = TorchaoVersion::kMain;
  CHECK(canonicalize(r).recipe == recipe("scaling: delayed\n"));
}

TEST_CASE("explain and runs_as name the torchao version an MX mode follows",
          "[recipes][peer_versions]") {
  const std::string text = explain_file(kRoot + "/recipes/configs/recipe-mxfp8-floor.yaml");
  CHECK(text.find("torchao_version: torchao-0.18 (torchao v0.18.0's to_mx)") != std::string::npos);
  CHECK(text.find("- mx_scale_mode: asked floor -> te\n    TE rounds the E8M0 scale up from "
                  "RN(amax * RN(1/fp8_max)); floor is a torchao choice, computed as torchao "
                  "v0.18.0's to_mx (torchao_version: torchao-0.18, the pinned release) "
                  "[te-accelerate.md §4.3, torchao-mx.md §4.3]") != std::string::npos);
  const std::string main_text =
      explain_file(kRoot + "/recipes/configs/recipe-mxfp8-floor-torchao-main.yaml");
  CHECK(main_text.find("computed as torchao main's to_mx (torchao_version: torchao-main) "
                       "[te-accelerate.md §4.3, torchao-mx.md §4.2]") != std::string::npos);
  // Run as upstream (TE's MXFP8BlockScaling), the mode changes and the version is not reported
  // as a change: TE has none.
  const RecipeToRun up = read_recipe_to_run(
      kRoot + "/recipes/configs/recipe-mxfp8-floor-torchao-main.yaml", RunsAs::upstream);
  CHECK(up.recipe.mx_scale_mode == E8M0Mode::kTe);
  CHECK_FALSE(uses_torchao_version(up.recipe));
  bool mode_changed = false;
  for (const auto& field : up.changed_fields) {
    const std::string change = change_text(field);
    INFO(change);
    CHECK(change.rfind("torchao_version", 0) == std::string::npos);
    mode_changed = mode_changed || change.rfind("mx_scale_mode: floor -> te (", 0) == 0;
  }
  CHECK(mode_changed);
}
