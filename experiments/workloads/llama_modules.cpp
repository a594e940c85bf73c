#include "experiments/workloads/llama_modules.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiments/workloads/linear_call.hpp"

namespace fp8lab::experiments {

RmsNormImpl::RmsNormImpl(std::int64_t features, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({features}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps_) * weight;
}

RopeTables rope_tables(std::int64_t positions, std::int64_t head_dim, double base) {
  if (head_dim % 2 != 0) {
    throw std::invalid_argument("rope: head dimension " + std::to_string(head_dim) +
                                " is odd; rotary embeddings pair channels");
  }
  // In float64, then rounded once: the tables do not depend on the accumulation order.
  const auto options = torch::TensorOptions().dtype(torch::kDouble);
  auto inverse_frequency =
      torch::pow(base, -torch::arange(0, head_dim, 2, options) / static_cast<double>(head_dim));
  auto angles = torch::outer(torch::arange(positions, options), inverse_frequency);
  angles = torch::cat({angles, angles}, -1);  // [positions, head_dim]
  return {angles.cos().to(torch::kFloat), angles.sin().to(torch::kFloat)};
}

torch::Tensor apply_rope(const torch::Tensor& x, const RopeTables& tables) {
  const auto time = x.size(-2), half = x.size(-1) / 2;
  const auto cos = tables.cos.slice(0, 0, time).to(x.device(), x.scalar_type());
  const auto sin = tables.sin.slice(0, 0, time).to(x.device(), x.scalar_type());
  const auto rotated = torch::cat({-x.slice(-1, half), x.slice(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

namespace {
torch::nn::Linear linear(std::int64_t in, std::int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}
}  // namespace

CausalSelfAttentionImpl::CausalSelfAttentionImpl(std::int64_t d_model, std::int64_t heads)
    : heads_(heads) {
  if (heads < 1 || d_model % heads != 0) {
    throw std::invalid_argument("attention: d_model " + std::to_string(d_model) +
                                " is not a multiple of heads " + std::to_string(heads));
  }
  for (const char* name : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    register_module(name, linear(d_model, d_model));
  }
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, const RopeTables& rope) {
  const auto batch = x.size(0), time = x.size(1), channels = x.size(2);
  const auto head_dim = channels / heads_;
  auto heads = [&](const torch::Tensor& t) {
    return t.view({batch, time, heads_, head_dim}).transpose(1, 2);
  };
  const auto q = apply_rope(heads(forward_linear(*this, "q_proj", x)), rope);
  const auto k = apply_rope(heads(forward_linear(*this, "k_proj", x)), rope);
  const auto v = heads(forward_linear(*this, "v_proj", x));
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
  const auto mask =
      torch::ones({time, time}, torch::TensorOptions().dtype(torch::kBool).device(x.device()))
          .triu(1);
  scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
  const auto attended = torch::matmul(torch::softmax(scores, -1), v)
                            .transpose(1, 2)
                            .contiguous()
                            .view({batch, time, channels});
  return forward_linear(*this, "o_proj", attended);
}

std::int64_t swiglu_hidden(std::int64_t d) { return (8 * d / 3 + 31) / 32 * 32; }

SwiGluMlpImpl::SwiGluMlpImpl(std::int64_t d_model, std::int64_t ffn, bool smooth)
    : smooth_(smooth) {
  register_module("gate_proj", linear(d_model, ffn));
  register_module("up_proj", linear(d_model, ffn));
  register_module("down_proj", linear(ffn, d_model));
}

torch::Tensor SwiGluMlpImpl::forward(const torch::Tensor& x) {
  const auto gate = torch::silu(forward_linear(*this, "gate_proj", x));
  const auto up = forward_linear(*this, "up_proj", x);
  if (!smooth_) return forward_linear(*this, "down_proj", gate * up);
  // Smooth-SwiGLU: one scale per token, the max of |up| over the ffn channels, detached.
  auto s = up.detach().abs().amax(-1, /*keepdim=*/true);
  s = torch::where(s > 0, s, torch::ones_like(s));
  return forward_linear(*this, "down_proj", gate * (up / s)) * s;
}

LlamaBlockImpl::LlamaBlockImpl(std::int64_t d_model, std::int64_t heads, std::int64_t ffn,
                               torch::Tensor channel_scale, bool smooth_swiglu) {
  attention_norm_ = register_module("attention_norm", RmsNorm(d_model));
  attention_ = register_module("attention", CausalSelfAttention(d_model, heads));
  mlp_norm_ = register_module("mlp_norm", RmsNorm(d_model));
  mlp_ = register_module("mlp", SwiGluMlp(d_model, ffn, smooth_swiglu));
  channel_scale_ = register_buffer("channel_scale", std::move(channel_scale));
}

torch::Tensor LlamaBlockImpl::forward(const torch::Tensor& x, const RopeTables& rope) {
  const auto h = x + attention_->forward(attention_norm_->forward(x) * channel_scale_, rope);
  return h + mlp_->forward(mlp_norm_->forward(h) * channel_scale_);
}

}  // namespace fp8lab::experiments
