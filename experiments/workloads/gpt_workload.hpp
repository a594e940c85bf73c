// Workloads "gpt-tiny" and "gpt-small": a decoder-only transformer (token + position embeddings,
// pre-LayerNorm blocks of causal self-attention and a GELU MLP, a final LayerNorm and an untied
// output head with a bias), trained with AdamW and a cosine learning-rate decay on the
// character-level corpus of text_corpus.hpp.
// Every Linear (qkv, attention output, MLP in and out, head) is a torch::nn::Linear that
// convert_model may swap; attention scores, softmax, LayerNorm and embeddings stay in fp32.
#pragma once

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

struct GptOptions {
  std::string name = "gpt-tiny";
  std::int64_t context = 32;
  std::int64_t embedding = 32;
  std::int64_t layers = 1;
  std::int64_t heads = 2;
  std::int64_t batch_size = 8;
  std::int64_t eval_batches = 4;
  std::string corpus_directory = "/usr/share/common-licenses";
  // Every other field is TrainingSchedule's (tokens_per_batch: batch x context, set by the
  // language-model workload).
  TrainingSchedule schedule{.steps = 60,
                            .warmup_steps = 5,
                            .learning_rate = 3e-3,
                            .final_lr_fraction = 0.1,
                            .weight_decay = 0.01};
};

GptOptions gpt_tiny_options();   // tests: a few seconds per run
GptOptions gpt_small_options();  // the default sweep (sized so that scripts/main fits 15 minutes)

std::unique_ptr<Workload> make_gpt_workload(const GptOptions& options);

// Options context, d_model, layers, heads, batch, eval_batches and the schedule's.
OptionFields<GptOptions> gpt_option_fields();

}  // namespace fp8lab::experiments
