// A workload: a LibTorch model, its deterministic data and its training schedule. The runner trains
// it twice over: once with the deterministic high-precision Linear (the baseline) and once per FP8
// recipe, on the same batches, so that every difference in loss, weights and gradients comes from
// the recipe.
//
// Rules every workload follows (the runner relies on them):
// - Every Linear is a plain torch::nn::Linear registered as a named child, and the model calls it
//   through forward_linear() (linear_call.hpp), so that convert_model can swap it for an FP8 or
//   high-precision Linear after construction.
// - make_model(seed) and train_batch(step, seed) are pure functions of their arguments: parameters
//   and data come from explicit generators, never from torch's global one.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/workloads/option_fields.hpp"

namespace fp8lab::experiments {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;
};

// A model the runner can train: loss(batch) is the scalar training objective.
class TrainableModel : public torch::nn::Module {
 public:
  virtual torch::Tensor loss(const Batch& batch) = 0;
  // The loss of each example of the batch ([batch], same reduction per example as loss()), for
  // the eval loss's standard error; undefined when the model does not provide it (the runner
  // then uses the spread of the eval batches' losses).
  virtual torch::Tensor example_losses(const Batch& /*batch*/) { return {}; }
  // Names of the parameters that are embeddings or the output head (not counted in the
  // non-embedding parameter count of the record).
  virtual std::vector<std::string> embedding_parameter_names() const { return {}; }
};

// AdamW; the learning rate rises linearly over warmup_steps, then follows a cosine from
// learning_rate down to learning_rate * final_lr_fraction at the last step (the decay makes the
// final losses of nearby runs comparable instead of catching them at different points of a
// plateau). Eval every eval_every steps and at the last step: the evals a verdict reads (the first
// and the tail's, experiments/results/eval_tail.hpp) on the whole eval set, the others on every
// early_eval_stride-th eval batch (1: every eval on the whole set).
struct TrainingSchedule {
  std::int64_t steps = 100;
  std::int64_t eval_every = 10;
  std::int64_t early_eval_stride = 8;
  std::int64_t warmup_steps = 0;
  double learning_rate = 1e-3;
  double final_lr_fraction = 1.0;  // 1: constant after warm-up
  double weight_decay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.99;
  // Elements of a batch that count as "tokens" for tokens/s (tokens for a language model,
  // samples for the MLP).
  std::int64_t tokens_per_batch = 1;
  // Clip the global gradient L2 norm to this before each optimizer step; 0: no clipping.
  double grad_clip = 0.0;
};

// The schedule's options (steps, eval_every, early_eval_stride, warmup, lr, final_lr_fraction, weight_decay,
// grad_clip, beta1, beta2).
OptionFields<TrainingSchedule> schedule_fields();

// The option fields of a workload with options: its own, then the schedule's (of its options
// struct's member `schedule`), so that every workload lists and reads them alike.
template <class Options>
OptionFields<Options> with_schedule_fields(OptionFields<Options> own) {
  append_fields(own, &Options::schedule, schedule_fields());
  return own;
}

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;  // one line, for reports and `fp8lab run --help`
  virtual TrainingSchedule schedule() const = 0;
  virtual std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const = 0;
  virtual Batch train_batch(std::int64_t step, std::uint64_t seed) const = 0;
  // The fixed evaluation set: the same batches on every call, for every seed.
  virtual std::vector<Batch> eval_batches() const = 0;
};

// A generator whose stream is a pure function of (seed, stream): used for parameters (stream 0)
// and per-step data (stream = step + 1), so that reordering nothing else changes the draws.
torch::Generator make_generator(std::uint64_t seed, std::uint64_t stream);
// The generator of training step `step`'s data: make_generator(seed, step + 1).
torch::Generator step_generator(std::uint64_t seed, std::int64_t step);
// The generator of fixed eval batch i of the synthetic workloads (mlp, residual-mlp): the same for
// every seed, on streams >= 2^62, disjoint from every training step's.
torch::Generator eval_generator(std::int64_t i);

// The part of a workload that its options struct decides (schedule, batch_size; tokens per batch
// = batch_size samples) and its fixed eval batches, which the derived class fills.
template <class Options>
class OptionsWorkload : public Workload {
 public:
  OptionsWorkload(std::string name, Options options)
      : name_(std::move(name)), options_(std::move(options)) {}
  std::string name() const override { return name_; }
  TrainingSchedule schedule() const override {
    auto s = options_.schedule;
    s.tokens_per_batch = options_.batch_size;
    return s;
  }
  std::vector<Batch> eval_batches() const override { return eval_; }

 protected:
  std::string name_;
  Options options_;
  std::vector<Batch> eval_;
};

// What a workload file gives the registry (registry.hpp), once per preset: the name, the option
// table with the preset's defaults, and what makes the workload from every option's value. The
// options struct stays in the workload's file: users name a workload by its spec.
struct WorkloadPreset {
  std::string name;
  WorkloadOptionTable options;
  std::function<std::unique_ptr<Workload>(const WorkloadOptionValues& values)> make;
};

// The presets of one kind of workload, one per spec ("name" or "name:key=value,..."): the first
// spec's settings applied to the options struct's defaults, every later one's to the first
// preset's (a larger model of the same kind); make(name, options) makes one.
template <class Options>
std::vector<WorkloadPreset> workload_presets(
    const OptionFields<Options>& fields,
    std::unique_ptr<Workload> (*make)(const std::string& name, const Options& options),
    const std::vector<std::string>& specs) {
  std::vector<WorkloadPreset> presets;
  Options base{};
  for (const auto& spec : specs) {
    auto [name, defaults] = preset(fields, base, spec);
    if (presets.empty()) base = defaults;
    presets.push_back(
        {name, option_table(fields, defaults), [=](const WorkloadOptionValues& values) {
           return make(name, options_from(fields, defaults, values));
         }});
  }
  return presets;
}

// The `make` of workload_presets for a workload class constructed from (name, options).
template <class W, class Options>
std::unique_ptr<Workload> construct_workload(const std::string& name, const Options& options) {
  return std::make_unique<W>(name, options);
}

}  // namespace fp8lab::experiments
