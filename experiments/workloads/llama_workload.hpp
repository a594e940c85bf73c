// Workloads "llama-xs", "llama-s", "llama-m": a decoder-only Llama-style language model (token
// embedding, pre-norm blocks of RMSNorm + causal multi-head attention with RoPE + RMSNorm + SwiGLU
// MLP (llama_modules.hpp), a final RMSNorm and an untied LM head, no biases) trained with AdamW,
// linear warm-up, cosine decay and gradient clipping on the BPE-tokenized text of bpe_corpus.hpp.
//
// The embedding and the LM head stay in high precision by default, as accelerate's and torchao's
// filters leave the first and last layers: the head is then a plain fp32 matmul that convert_model
// does not see. fp8_head=true makes it a Linear child like the others (the recipe's module filter
// then decides). The embedding is a lookup, never a GEMM.
//
// Outlier channels (outlier_channels=n, outlier_scale=k): in every block, the first n channels of
// both normalized inputs (the inputs of q/k/v_proj and gate/up_proj) are multiplied by k, a fixed
// buffer that training cannot change, as mlp-outliers scales its first input features.
#pragma once

#include <filesystem>
#include <string>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

struct LlamaOptions {
  std::string name = "llama-xs";
  std::int64_t layers = 2;
  std::int64_t d_model = 128;
  std::int64_t heads = 4;
  std::int64_t ffn = 0;  // 0: 8/3 d_model rounded up to a multiple of 32 (Llama's rule)
  std::int64_t context = 64;
  std::int64_t batch_size = 8;
  std::int64_t eval_windows = 256;  // context windows of the eval split per evaluation
  double rope_base = 10000.0;
  bool fp8_head = false;
  std::int64_t outlier_channels = 0;
  double outlier_scale = 1.0;
  std::filesystem::path corpus_directory;  // empty: default_bpe_corpus_directory()
  // Every other field is TrainingSchedule's (tokens_per_batch: batch x context, set by the
  // language-model workload).
  TrainingSchedule schedule{.steps = 200,
                            .eval_every = 25,
                            .warmup_steps = 20,
                            .learning_rate = 3e-3,
                            .final_lr_fraction = 0.1,
                            .weight_decay = 0.1,
                            .beta2 = 0.95,
                            .grad_clip = 1.0};
};

LlamaOptions llama_xs_options();  // d_model 128, 2 layers: the default sweep on 2 cores
LlamaOptions llama_s_options();   // d_model 256, 4 layers: ~3M non-embedding parameters
LlamaOptions llama_m_options();   // d_model 512, 8 layers: ~25M parameters; long runs, cuda

// The SwiGLU hidden size for d_model when ffn is 0.
std::int64_t llama_default_ffn(std::int64_t d_model);

std::unique_ptr<Workload> make_llama_workload(const LlamaOptions& options);

// Options layers, d_model, heads, ffn, context, batch, eval_windows, rope_base, fp8_head,
// outlier_channels, outlier_scale and the schedule's.
OptionFields<LlamaOptions> llama_option_fields();

}  // namespace fp8lab::experiments
