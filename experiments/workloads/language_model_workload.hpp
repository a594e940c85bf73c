// What every language-model workload shares (gpt-*, llama-*): the data, the batching and the eval
// set. A workload file keeps only what differs: its model, its options and its description.
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

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

struct LanguageModelSpec {
  std::string name;
  std::string description;
  TrainingSchedule schedule;  // tokens_per_batch is set to batch_size x context
  std::int64_t context = 0;
  std::int64_t batch_size = 0;
  std::int64_t eval_windows = 0;
  torch::Tensor train_tokens;  // 1-D, kLong
  torch::Tensor eval_tokens;   // 1-D, kLong
  std::string corpus;          // where the tokens come from, for the error below
  std::function<std::shared_ptr<TrainableModel>(std::uint64_t seed)> make_model;
};

// std::runtime_error naming the workload and the corpus when the eval split is shorter than one
// window.
std::unique_ptr<Workload> make_language_model_workload(LanguageModelSpec spec);

}  // namespace fp8lab::experiments
