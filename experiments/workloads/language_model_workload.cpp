#include "experiments/workloads/language_model_workload.hpp"

#include <algorithm>
#include <stdexcept>

namespace fp8lab::experiments {
namespace {

class LanguageModelWorkload : public Workload {
 public:
  explicit LanguageModelWorkload(LanguageModelSpec spec) : spec_(std::move(spec)) {
    spec_.schedule.tokens_per_batch = spec_.batch_size * spec_.context;
    const auto last = spec_.eval_tokens.size(0) - spec_.context - 1;
    if (last < 0) {
      throw std::runtime_error("workload " + spec_.name + ": the eval split of " + spec_.corpus +
                               " (" + std::to_string(spec_.eval_tokens.size(0)) +
                               " tokens) is shorter than one window of context + 1 = " +
                               std::to_string(spec_.context + 1) + " tokens");
    }
    const auto windows = spec_.eval_windows;
    const auto offsets = torch::linspace(0, static_cast<double>(last), windows).to(torch::kLong);
    for (std::int64_t b = 0; b < windows; b += spec_.batch_size) {
      eval_.push_back(windows_at(spec_.eval_tokens,
                                 offsets.slice(0, b, std::min(windows, b + spec_.batch_size))));
    }
  }

  std::string name() const override { return spec_.name; }
  std::string description() const override { return spec_.description; }
  TrainingSchedule schedule() const override { return spec_.schedule; }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return spec_.make_model(seed);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    auto generator = step_generator(seed, step);
    const auto last = spec_.train_tokens.size(0) - spec_.context - 1;
    auto offsets = torch::randint(0, last + 1, {spec_.batch_size}, generator, torch::kLong);
    return windows_at(spec_.train_tokens, offsets);
  }
  std::vector<Batch> eval_batches() const override { return eval_; }

 private:
  Batch windows_at(const torch::Tensor& tokens, const torch::Tensor& offsets) const {
    auto index = offsets.unsqueeze(1) + torch::arange(spec_.context + 1, torch::kLong);
    auto windows = tokens.index({index});
    return Batch{windows.slice(1, 0, spec_.context).contiguous(),
                 windows.slice(1, 1, spec_.context + 1).contiguous()};
  }

  LanguageModelSpec spec_;
  std::vector<Batch> eval_;
};

}  // namespace

std::unique_ptr<Workload> make_language_model_workload(LanguageModelSpec spec) {
  return std::make_unique<LanguageModelWorkload>(std::move(spec));
}

}  // namespace fp8lab::experiments
