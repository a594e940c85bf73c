// The building blocks of the llama workload (llama_workload.hpp), public so that
// tests/experiments/workload_modules_test.cpp checks each one's forward and gradients against an
// independent float64 autograd reference: RMSNorm, rotary position embeddings, causal multi-head
// attention, the SwiGLU MLP and the pre-norm block. Every Linear is a torch::nn::Linear child
// called through forward_linear (no bias, as in Llama), so that convert_model can swap it.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace fp8lab::experiments {

// y = x / sqrt(mean(x^2 over the last dimension) + eps) * weight (Zhang & Sennrich 2019).
class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(std::int64_t features, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

// Rotary embeddings (Su et al. 2021) in the "rotate half" layout of Hugging Face's Llama: channel
// i of a head pairs with channel i + head_dim/2, rotated by position * base^(-2i/head_dim).
// cos and sin are [positions, head_dim] tables (rope_tables); x is [batch, heads, time, head_dim].
struct RopeTables {
  torch::Tensor cos, sin;
};
RopeTables rope_tables(std::int64_t positions, std::int64_t head_dim, double base = 10000.0);
torch::Tensor apply_rope(const torch::Tensor& x, const RopeTables& tables);

// Causal self-attention with q_proj, k_proj, v_proj, o_proj; RoPE on q and k; softmax in the
// input's dtype. x is [batch, time, d_model].
class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  CausalSelfAttentionImpl(std::int64_t d_model, std::int64_t heads);
  torch::Tensor forward(const torch::Tensor& x, const RopeTables& rope);

 private:
  std::int64_t heads_;
};
TORCH_MODULE(CausalSelfAttention);

// down_proj(silu(gate_proj(x)) * up_proj(x)) (Shazeer 2020).
//
// With `smooth`, Fishman et al.'s Smooth-SwiGLU (arXiv 2409.12517 §4.4) as their reference code
// computes it (Megatron-DeepSpeed fork, experimental/fp8_linear.py ScaledSwiglu and
// megatron/model/transformer.py ParallelMLP.forward; docs/numerics.md, "Smooth-SwiGLU"): per token
// t, s_t = max over the ffn channels of |up_proj(x)_t|, detached (no gradient through it) and
// computed from the current tensor at every call; h = silu(gate_proj(x)) * (up_proj(x) / s_t);
// y = down_proj(h) * s_t. In exact arithmetic y, and every gradient, equal the plain MLP's; what
// changes is the down projection's quantized input, whose rows the scale bounds by
// max |silu(gate_proj(x)_t)|. A row whose s_t is 0 (up_proj's output all zero) takes s_t = 1.
class SwiGluMlpImpl : public torch::nn::Module {
 public:
  SwiGluMlpImpl(std::int64_t d_model, std::int64_t ffn, bool smooth = false);
  torch::Tensor forward(const torch::Tensor& x);
  bool smooth() const { return smooth_; }

 private:
  bool smooth_;
};
TORCH_MODULE(SwiGluMlp);

// Llama's SwiGLU hidden size for width d: 8/3 d rounded up to a multiple of 32 (the llama
// workload's default ffn, and the residual-mlp's SwiGLU blocks).
std::int64_t swiglu_hidden(std::int64_t d);

// h = x + attention(norm1(x) * c); y = h + mlp(norm2(h) * c), where c is a fixed per-channel
// multiplier (ones, or the outlier channels of llama_workload.hpp). `smooth_swiglu`: the MLP is
// Smooth-SwiGLU (SwiGluMlpImpl).
class LlamaBlockImpl : public torch::nn::Module {
 public:
  LlamaBlockImpl(std::int64_t d_model, std::int64_t heads, std::int64_t ffn,
                 torch::Tensor channel_scale, bool smooth_swiglu = false);
  torch::Tensor forward(const torch::Tensor& x, const RopeTables& rope);

 private:
  RmsNorm attention_norm_{nullptr}, mlp_norm_{nullptr};
  CausalSelfAttention attention_{nullptr};
  SwiGluMlp mlp_{nullptr};
  torch::Tensor channel_scale_;
};
TORCH_MODULE(LlamaBlock);

}  // namespace fp8lab::experiments
