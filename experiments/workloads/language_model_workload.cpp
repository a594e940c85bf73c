#include "experiments/workloads/language_model_workload.hpp"

#include <algorithm>
#include <stdexcept>

namespace fp8lab::experiments {
namespace {

class LanguageModelWorkload : public Workload {
 public:
  LanguageModelWorkload(std::string name, const LanguageModelOptions& options,
                        std::int64_t eval_windows, TokenSplits tokens, std::string description,
                        ModelFactory make_model)
      : name_(std::move(name)),
        o_(options),
        tokens_(std::move(tokens)),
        description_(std::move(description)),
        make_model_(std::move(make_model)) {
    o_.schedule.tokens_per_batch = o_.batch_size * o_.context;
    const auto last = tokens_.eval.size(0) - o_.context - 1;
    if (last < 0) {
      throw std::runtime_error("workload " + name_ + ": the eval split of " + tokens_.source +
                               " (" + std::to_string(tokens_.eval.size(0)) +
                               " tokens) is shorter than one window of context + 1 = " +
                               std::to_string(o_.context + 1) + " tokens");
    }
    const auto offsets =
        torch::linspace(0, static_cast<double>(last), eval_windows).to(torch::kLong);
    for (std::int64_t b = 0; b < eval_windows; b += o_.batch_size) {
      eval_.push_back(
          windows_at(tokens_.eval, offsets.slice(0, b, std::min(eval_windows, b + o_.batch_size))));
    }
  }

  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  TrainingSchedule schedule() const override { return o_.schedule; }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return make_model_(seed);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    auto generator = step_generator(seed, step);
    const auto last = tokens_.train.size(0) - o_.context - 1;
    auto offsets = torch::randint(0, last + 1, {o_.batch_size}, generator, torch::kLong);
    return windows_at(tokens_.train, offsets);
  }
  std::vector<Batch> eval_batches() const override { return eval_; }

 private:
  Batch windows_at(const torch::Tensor& tokens, const torch::Tensor& offsets) const {
    auto index = offsets.unsqueeze(1) + torch::arange(o_.context + 1, torch::kLong);
    auto windows = tokens.index({index});
    return Batch{windows.slice(1, 0, o_.context).contiguous(),
                 windows.slice(1, 1, o_.context + 1).contiguous()};
  }

  std::string name_;
  LanguageModelOptions o_;
  TokenSplits tokens_;
  std::string description_;
  ModelFactory make_model_;
  std::vector<Batch> eval_;
};

}  // namespace

void init_normal(torch::Tensor& weight, double std, torch::Generator& generator) {
  torch::NoGradGuard no_grad;
  weight.normal_(0.0, std, generator);
}

OptionFields<LanguageModelOptions> language_model_shape_fields() {
  using O = LanguageModelOptions;
  return {
      integer_field("layers", &O::layers, 1, 1024, "transformer blocks"),
      integer_field("d_model", &O::d_model, 2, 65536, "residual stream (embedding) width"),
      integer_field("heads", &O::heads, 1, 1024,
                    "attention heads (must divide d_model; llama's RoPE also needs an even head "
                    "dimension)"),
      integer_field("context", &O::context, 2, 65536, "tokens per window"),
      integer_field("batch", &O::batch_size, 1, 1 << 20, "windows per training batch"),
  };
}

OptionFields<LanguageModelOptions> language_model_schedule_fields() {
  return with_schedule_fields<LanguageModelOptions>({});
}

std::unique_ptr<Workload> make_language_model_workload(std::string name,
                                                       const LanguageModelOptions& options,
                                                       std::int64_t eval_windows,
                                                       TokenSplits tokens, std::string description,
                                                       ModelFactory make_model) {
  return std::make_unique<LanguageModelWorkload>(std::move(name), options, eval_windows,
                                                 std::move(tokens), std::move(description),
                                                 std::move(make_model));
}

}  // namespace fp8lab::experiments
