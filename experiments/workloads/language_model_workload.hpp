// What every language-model workload shares (gpt-*, llama-*): the options of its shape and
// schedule, the data, the batching and the eval set. A workload file keeps only what differs: its
// model, its own options and its description.
//
// Data: windows of context + 1 tokens of a tokenized corpus (input = the first context tokens,
// target = the last context). Training: batch_size windows at uniformly random offsets of the
// train split, drawn from make_generator(seed, step + 1). Eval: eval_windows windows at evenly
// spaced offsets of the eval split (fixed, no randomness, the same for every run and seed; they do
// not overlap while eval_windows * (context + 1) fits), in batches of batch_size, the last one
// shorter when batch_size does not divide eval_windows. Tokens per batch: batch_size x context.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// The options every language-model workload has: the transformer's shape, the windows per
// training batch and the schedule (tokens_per_batch: batch x context). A workload's options
// struct holds them as its member `model`. No defaults of their own: each workload's first preset
// spells them (workload_presets).
struct LanguageModelOptions {
  std::int64_t layers = 0;
  std::int64_t d_model = 0;
  std::int64_t heads = 0;
  std::int64_t context = 0;
  std::int64_t batch_size = 0;
  TrainingSchedule schedule;
};

// Options layers, d_model, heads, context, batch; and the schedule's.
OptionFields<LanguageModelOptions> language_model_shape_fields();
OptionFields<LanguageModelOptions> language_model_schedule_fields();

// The option fields of a language-model workload: the shape's, the workload's own `own`, then the
// schedule's, so that every language model lists and reads them alike.
template <class Options>
OptionFields<Options> language_model_option_fields(const OptionFields<Options>& own) {
  OptionFields<Options> fields;
  append_fields(fields, &Options::model, language_model_shape_fields());
  fields.insert(fields.end(), own.begin(), own.end());
  append_fields(fields, &Options::model, language_model_schedule_fields());
  return fields;
}

// A tokenized corpus's two splits (1-D, kLong) and where they come from (for the error below).
struct TokenSplits {
  torch::Tensor train;
  torch::Tensor eval;
  std::string source;
};
template <class Token>
TokenSplits token_splits(const std::vector<Token>& train, const std::vector<Token>& eval,
                         std::string source) {
  return {torch::tensor(train, torch::kLong), torch::tensor(eval, torch::kLong), std::move(source)};
}

// Draws `weight` from N(0, std^2) with `generator` (the language models' initialisation).
void init_normal(torch::Tensor& weight, double std, torch::Generator& generator);

using ModelFactory = std::function<std::shared_ptr<TrainableModel>(std::uint64_t seed)>;

// The workload `name`: `options`' windows of `tokens`, eval_windows of them in its eval set, and
// the model of make_model(seed). std::runtime_error naming the workload and the corpus when the
// eval split is shorter than one window.
std::unique_ptr<Workload> make_language_model_workload(std::string name,
                                                       const LanguageModelOptions& options,
                                                       std::int64_t eval_windows,
                                                       TokenSplits tokens, std::string description,
                                                       ModelFactory make_model);

}  // namespace fp8lab::experiments
