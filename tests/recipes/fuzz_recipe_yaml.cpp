// libFuzzer target over every YAML reader of recipes/: recipe files, accelerate configs, sweep
// files (and their expansion, runs_as included), the upstream recipe to run, explain, and the
// ACCELERATE_FP8_* reader (input lines "K=V").
// The contract under test: any input either parses or throws RecipeError; nothing else escapes,
// nothing crashes, leaks or trips UBSan. Built and run by scripts/fuzz-recipes (CTest: label fuzz).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "recipes/accelerate.hpp"
#include "recipes/canonical.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/error.hpp"
#include "recipes/explain.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/sweep.hpp"

namespace {

using namespace fp8lab::recipes;

// Expansion stores every request: keep fuzzed sweeps small enough to run thousands per second.
bool small_enough(const Sweep& sweep) {
  std::uint64_t n = sweep.workloads.size() * sweep.seeds.size();
  for (const auto& p : sweep.parameters) {
    n *= p.values.size();
    if (n > 512) return false;
  }
  return n <= 512;
}

std::map<std::string, std::string> as_environment(const std::string& text) {
  std::map<std::string, std::string> env;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) env["ACCELERATE_FP8_" + line.substr(0, eq)] = line.substr(eq + 1);
    start = end + 1;
  }
  return env;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Recipe r = parse_recipe_text(text, "fuzz.yaml");
    (void)run_id(canonicalize(r).recipe);
    (void)format_compatibility(compatibility(r), "fuzz");
    (void)recipe_to_run(compatibility(r), RunsAs::upstream, {"fuzz.yaml", 0});
  } catch (const RecipeError&) {
  }
  try {
    (void)format_compatibility(compatibility(parse_accelerate_config_text(text, "fuzz.yaml")),
                               "fuzz");
  } catch (const RecipeError&) {
  }
  try {
    const Sweep sweep = parse_sweep_text(text, "fuzz.yaml");
    if (small_enough(sweep)) (void)format_dry_run(expand(sweep));
  } catch (const RecipeError&) {
  }
  try {
    (void)explain_text(text, "fuzz.yaml");
  } catch (const RecipeError&) {
  }
  try {
    (void)compatibility(read_accelerate_env(as_environment(text)));
  } catch (const RecipeError&) {
  }
  return 0;
}
