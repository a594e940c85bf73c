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

#include <vector>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// llama-xs (d_model 128, 2 layers: the default sweep on 2 cores), llama-s (d_model 256, 4 layers:
// ~3M non-embedding parameters) and llama-m (d_model 512, 8 layers: ~25M parameters; long runs,
// cuda). Options: language_model_workload.hpp's, ffn, eval_windows, rope_base, fp8_head,
// outlier_channels and outlier_scale.
std::vector<WorkloadPreset> llama_workloads();

}  // namespace fp8lab::experiments
