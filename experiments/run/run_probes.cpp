#include "experiments/run/run_probes.hpp"

#include <stdexcept>

#include "experiments/results/probe_sidecar.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/run/probe_recipes.hpp"

namespace fp8lab::experiments {
ProbeModels probe_models(const RunRequest& request, const Workload& workload) {
  ProbeModels models;
  models.workload = &workload;
  models.seed = static_cast<std::uint64_t>(request.seed);
  models.high_precision = request.high_precision;
  models.backend = request.backend;
  models.device = request.backend.trains_on_cuda() ? torch::Device(torch::kCUDA)
                                                   : torch::Device(torch::kCPU);
  return models;
}

namespace {

std::int64_t steps_planned(const RunRequest& request, const Workload& workload) {
  return request.steps.value_or(workload.schedule().steps);
}

}  // namespace

RunProbes RunProbes::for_baseline(const RunRequest& request, const Workload& workload,
                                  TrainingOptions& options) {
  RunProbes probes;
  if (request.probes.every < 1 || request.probes.recipes.empty()) return probes;
  const auto recipes = checked_probe_recipes(request.probes, request.workload);
  std::vector<std::string> labels;
  for (const auto& recipe : recipes) labels.push_back(recipe_label(recipe));
  probes.baseline_ = std::make_shared<BaselineProbes>(probe_models(request, workload),
                                                      request.probes, recipes, labels,
                                                      steps_planned(request, workload));
  options.after_backward = [p = probes.baseline_](const StepAfterBackward& step) {
    p->after_backward(step);
  };
  return probes;
}

RunProbes RunProbes::for_fp8_run(const RunRequest& request, const Workload& workload,
                                 const std::string& label, TrainingOptions& options) {
  RunProbes probes;
  if (request.probes.every < 1) return probes;
  if (request.recipe && !request.recipe->schedule.empty()) {
    throw std::invalid_argument(
        "probes: not built for a recipe with a precision schedule (the exact-step probe would go "
        "on probing the first stage after a switch); accepted: probes or a schedule, not both");
  }
  probes.exact_ = std::make_shared<ExactOnRunProbes>(
      probe_models(request, workload), request.probes, label, steps_planned(request, workload));
  options.after_backward = [p = probes.exact_](const StepAfterBackward& step) {
    p->after_backward(step);
  };
  return probes;
}

void RunProbes::add_sidecar(RunRecord& record, const ResultsDirectory& directory,
                            const std::string& run_id) const {
  if (!baseline_ && !exact_) return;
  const auto& rows = baseline_ ? baseline_->rows() : exact_->rows();
  if (rows.empty()) {
    record.probe_sidecar = Field<std::string>::null();
    return;
  }
  const auto relative = probe_relative_path(run_id);
  write_results_file(directory, relative, probe_parquet(rows, directory.root() / relative));
  record.probe_sidecar = relative.generic_string();
}

}  // namespace fp8lab::experiments
