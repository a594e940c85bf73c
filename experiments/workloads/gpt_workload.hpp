// Workloads "gpt-tiny" and "gpt-small": a decoder-only transformer (token + position embeddings,
// pre-LayerNorm blocks of causal self-attention and a GELU MLP, a final LayerNorm and an untied
// output head with a bias), trained with AdamW and a cosine learning-rate decay on the
// character-level corpus of text_corpus.hpp.
// Every Linear (qkv, attention output, MLP in and out, head) is a torch::nn::Linear that
// convert_model may swap; attention scores, softmax, LayerNorm and embeddings stay in fp32.
#pragma once

#include <vector>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// gpt-tiny (tests: a few seconds per run) and gpt-small (the default sweep, sized so that
// scripts/main fits 15 minutes). Options: language_model_workload.hpp's, and eval_batches.
std::vector<WorkloadPreset> gpt_workloads();

}  // namespace fp8lab::experiments
