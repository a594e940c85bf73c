#include "experiments/run/probe_recipes.hpp"

#include <fmt/format.h>

#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/run/global_rng_guard.hpp"
#include "experiments/run/python_run.hpp"
#include "experiments/run/run_hooks.hpp"
#include "experiments/workloads/registry.hpp"

namespace fp8lab::experiments {

std::vector<recipes::Recipe> checked_probe_recipes(const recipes::ProbeSettings& settings,
                                                   const std::string& workload) {
  std::vector<recipes::Recipe> out;
  if (settings.recipes.empty()) return out;
  if (is_python_workload(workload)) {
    throw recipes::RecipeError(settings.site, settings.field, workload,
                               "probes are built for the workloads fp8lab trains itself, not for "
                               "fp8lab.sweep's python workload:",
                               "a C++ workload (fp8lab run --workload lists them), or no probes");
  }
  GlobalRngGuard rng;  // the models built here draw from it
  const auto made = make_workload(workload);
  const auto backend = make_backend({"sim", 0});
  for (std::size_t i = 0; i < settings.recipes.size(); ++i) {
    const auto& word = settings.recipes[i];
    const std::string field = fmt::format("{}[{}]", settings.field, i);
    auto recipe = recipes::probe_recipe(word, settings.site, field);
    const auto model = made->make_model(0);
    try {
      fp8_hooks(recipe, HighPrecision::fp32, backend, torch::kCPU).convert(*model);
    } catch (const std::exception& e) {
      throw recipes::RecipeError(settings.site, field, word,
                                 fmt::format("cannot run on workload {} ({}):", workload, e.what()),
                                 "a recipe an FP8 run of this workload can train");
    }
    if (!has_fp8_layers(*model)) {
      throw recipes::RecipeError(
          settings.site, field, word,
          fmt::format("converts no Linear of workload {} to FP8 (its module_filter skips them "
                      "all), so it would measure nothing:",
                      workload),
          "a recipe that converts at least one Linear");
    }
    out.push_back(std::move(recipe));
  }
  return out;
}

}  // namespace fp8lab::experiments
