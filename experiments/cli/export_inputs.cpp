#include "experiments/cli/export_inputs.hpp"

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "experiments/cli/npy.hpp"
#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/workloads/registry.hpp"

namespace fp8lab::experiments::cli {
namespace {

// Through the one writer (results_files.hpp: atomic, a full disk an error naming the file), as
// `fp8lab quantize` writes its .npy files.
void write_npy(const Descriptor& directory, const std::string& name, const torch::Tensor& tensor) {
  const auto t = tensor.detach().to(torch::kFloat).cpu().contiguous();
  const std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
  write_file_at(directory, name,
                npy_file("<f4", shape, t.data_ptr<float>(),
                         static_cast<std::size_t>(t.numel()) * sizeof(float)));
}

}  // namespace

void export_workload_inputs(const std::string& workload, std::uint64_t seed, std::int64_t steps,
                            const std::string& dir) {
  const auto w = make_workload(workload);
  const auto schedule = w->schedule();
  if (steps <= 0) steps = schedule.steps;
  const Descriptor root = *open_directory(dir, /*create=*/true);
  const Descriptor parameters = open_subdirectory(root, "parameters", /*create=*/true).value();
  const Descriptor batches = open_subdirectory(root, "batches", /*create=*/true).value();
  const auto model = w->make_model(seed);
  nlohmann::json names = nlohmann::json::array();
  for (const auto& item : model->named_parameters()) {
    write_npy(parameters, item.key() + ".npy", item.value());
    names.push_back(item.key());
  }
  for (std::int64_t step = 0; step < steps; ++step) {
    const auto batch = w->train_batch(step, seed);
    write_npy(batches, std::to_string(step) + ".input.npy", batch.input);
    write_npy(batches, std::to_string(step) + ".target.npy", batch.target);
  }
  const nlohmann::json inputs{{"workload", workload},
                              {"seed", seed},
                              {"steps", steps},
                              {"parameters", names},
                              {"schedule",
                               {{"warmup_steps", schedule.warmup_steps},
                                {"learning_rate", schedule.learning_rate},
                                {"final_lr_fraction", schedule.final_lr_fraction},
                                {"weight_decay", schedule.weight_decay},
                                {"beta1", schedule.beta1},
                                {"beta2", schedule.beta2},
                                {"grad_clip", schedule.grad_clip}}}};
  write_file_at(root, "inputs.json", inputs.dump(2) + "\n");
}

}  // namespace fp8lab::experiments::cli
