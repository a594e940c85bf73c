#include "experiments/cli/export_inputs.hpp"

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "experiments/cli/npy.hpp"
#include "experiments/workloads/registry.hpp"

namespace fp8lab::experiments::cli {
namespace {

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("--export-inputs: cannot write " + path.string());
}

void write_npy(const std::filesystem::path& path, const torch::Tensor& tensor) {
  const auto t = tensor.detach().to(torch::kFloat).cpu().contiguous();
  const std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
  write_file(path, npy_file("<f4", shape, t.data_ptr<float>(),
                            static_cast<std::size_t>(t.numel()) * sizeof(float)));
}

}  // namespace

void export_workload_inputs(const std::string& workload, std::uint64_t seed, std::int64_t steps,
                            const std::string& dir) {
  const auto w = make_workload(workload);
  const auto schedule = w->schedule();
  if (steps <= 0) steps = schedule.steps;
  const std::filesystem::path root(dir);
  std::filesystem::create_directories(root / "parameters");
  std::filesystem::create_directories(root / "batches");
  const auto model = w->make_model(seed);
  nlohmann::json names = nlohmann::json::array();
  for (const auto& item : model->named_parameters()) {
    write_npy(root / "parameters" / (item.key() + ".npy"), item.value());
    names.push_back(item.key());
  }
  for (std::int64_t step = 0; step < steps; ++step) {
    const auto batch = w->train_batch(step, seed);
    write_npy(root / "batches" / (std::to_string(step) + ".input.npy"), batch.input);
    write_npy(root / "batches" / (std::to_string(step) + ".target.npy"), batch.target);
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
  write_file(root / "inputs.json", inputs.dump(2) + "\n");
}

}  // namespace fp8lab::experiments::cli
