#include "experiments/workloads/llama_workload.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "experiments/workloads/bpe_corpus.hpp"
#include "experiments/workloads/language_model_workload.hpp"
#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/llama_modules.hpp"

namespace fp8lab::experiments {
namespace {

struct LlamaOptions {
  LanguageModelOptions model;
  std::int64_t ffn = 0;             // 0: 8/3 d_model rounded up to a multiple of 32 (Llama's rule)
  std::int64_t eval_windows = 256;  // context windows of the eval split per evaluation
  double rope_base = 10000.0;
  bool fp8_head = false;
  std::int64_t outlier_channels = 0;
  double outlier_scale = 1.0;
  bool smooth_swiglu = false;              // Smooth-SwiGLU (llama_modules.hpp, SwiGluMlpImpl)
  std::filesystem::path corpus_directory;  // empty: default_bpe_corpus_directory()
};

// The SwiGLU hidden size: ffn, or when 0 Llama's rule.
std::int64_t ffn_of(const LlamaOptions& o) {
  return o.ffn > 0 ? o.ffn : swiglu_hidden(o.model.d_model);
}

// N(0, 0.02) for the embedding and every Linear, the residual projections (o_proj, down_proj)
// scaled by 1/sqrt(2 layers) as GPT-2 and OLMo do; RMSNorm weights 1. Drawn from one generator in
// registration order (init_normal: language_model_workload.hpp).

class LlamaModel : public TrainableModel {
 public:
  LlamaModel(const LlamaOptions& o, std::int64_t vocabulary, std::uint64_t seed)
      : fp8_head_(o.fp8_head) {
    auto generator = make_generator(seed, 0);
    const auto d = o.model.d_model;
    const auto ffn = ffn_of(o);
    token_embedding_ = register_module("token_embedding", torch::nn::Embedding(vocabulary, d));
    init_normal(token_embedding_->weight, 0.02, generator);
    auto channel_scale = torch::ones({d});
    if (o.outlier_channels > 0) {
      channel_scale.slice(0, 0, std::min(o.outlier_channels, d)).fill_(o.outlier_scale);
    }
    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(o.model.layers));
    for (std::int64_t i = 0; i < o.model.layers; ++i) {
      auto block = register_module(
          "block" + std::to_string(i),
          LlamaBlock(d, o.model.heads, ffn, channel_scale.clone(), o.smooth_swiglu));
      for (auto& item : block->named_parameters()) {
        if (item.key().ends_with("norm.weight")) continue;
        const bool residual = item.key().find("o_proj") != std::string::npos ||
                              item.key().find("down_proj") != std::string::npos;
        init_normal(item.value(), residual ? residual_std : 0.02, generator);
      }
      blocks_.push_back(block);
    }
    final_norm_ = register_module("final_norm", RmsNorm(d));
    if (fp8_head_) {
      auto head = register_module(
          "head", torch::nn::Linear(torch::nn::LinearOptions(d, vocabulary).bias(false)));
      init_normal(head->weight, 0.02, generator);
    } else {
      head_weight_ = register_parameter("head_weight", torch::empty({vocabulary, d}));
      init_normal(head_weight_, 0.02, generator);
    }
    rope_ = rope_tables(o.model.context, d / o.model.heads, o.rope_base);
  }

  torch::Tensor logits(const torch::Tensor& tokens) {
    auto x = token_embedding_->forward(tokens);
    for (auto& block : blocks_) x = block->forward(x, rope_);
    x = final_norm_->forward(x);
    return fp8_head_ ? forward_linear(*this, "head", x) : torch::linear(x, head_weight_);
  }
  torch::Tensor loss(const Batch& batch) override {
    const auto l = logits(batch.input);
    return torch::cross_entropy_loss(l.reshape({-1, l.size(-1)}), batch.target.reshape({-1}));
  }
  torch::Tensor example_losses(const Batch& batch) override {
    const auto l = logits(batch.input);
    return torch::nn::functional::cross_entropy(
               l.reshape({-1, l.size(-1)}), batch.target.reshape({-1}),
               torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
        .view({batch.input.size(0), -1})
        .mean(1);
  }
  std::vector<std::string> embedding_parameter_names() const override {
    return {"token_embedding.weight", fp8_head_ ? "head.weight" : "head_weight"};
  }

 private:
  bool fp8_head_;
  torch::nn::Embedding token_embedding_{nullptr};
  std::vector<LlamaBlock> blocks_;
  RmsNorm final_norm_{nullptr};
  torch::Tensor head_weight_;
  RopeTables rope_;
};

std::unique_ptr<Workload> make_llama_workload(const std::string& name,
                                              const LlamaOptions& options) {
  const auto& o = options.model;
  if (o.d_model % o.heads != 0 || (o.d_model / o.heads) % 2 != 0) {
    throw std::invalid_argument("workload " + name + ": d_model " + std::to_string(o.d_model) +
                                " / heads " + std::to_string(o.heads) +
                                " must be a whole, even head dimension (RoPE pairs channels)");
  }
  const auto corpus = read_bpe_corpus(
      options.corpus_directory.empty() ? default_bpe_corpus_directory() : options.corpus_directory);
  std::string description =
      "Llama " + std::to_string(o.layers) + " layers, d_model " + std::to_string(o.d_model) + ", " +
      std::to_string(o.heads) + " heads, SwiGLU " + std::to_string(ffn_of(options)) + ", context " +
      std::to_string(o.context) + ", batch " + std::to_string(o.batch_size) + ", head " +
      (options.fp8_head ? "a Linear (FP8 if the recipe's filter allows)" : "fp32") + ", eval " +
      std::to_string(options.eval_windows) + " windows";
  if (options.outlier_channels > 0) {
    description += ", " + std::to_string(options.outlier_channels) + " outlier channels x" +
                   std::to_string(options.outlier_scale);
  }
  if (options.smooth_swiglu) description += ", Smooth-SwiGLU";
  return make_language_model_workload(
      name, o, options.eval_windows,
      token_splits(corpus.train, corpus.eval, corpus.directory.string()),
      description + "; " + corpus.description,
      [options, vocabulary = corpus.vocabulary](std::uint64_t seed) {
        return std::make_shared<LlamaModel>(options, vocabulary, seed);
      });
}

}  // namespace

std::vector<WorkloadPreset> llama_workloads() {
  using O = LlamaOptions;
  const auto fields = language_model_option_fields<O>({
      integer_field("ffn", &O::ffn, 0, 1 << 20,
                    "SwiGLU hidden size (0: 8/3 d_model rounded up to a multiple of 32)"),
      integer_field("eval_windows", &O::eval_windows, 1, 1 << 20,
                    "windows of the eval split per evaluation (evenly spaced)"),
      real_field("rope_base", &O::rope_base, 1.0, 1e9, "RoPE base (theta)"),
      flag_field("fp8_head", &O::fp8_head,
                 "make the LM head a Linear the recipe may convert (default: fp32 matmul)"),
      integer_field("outlier_channels", &O::outlier_channels, 0, 65536,
                    "the first N channels of each block's normalized inputs are scaled by "
                    "outlier_scale"),
      real_field("outlier_scale", &O::outlier_scale, 1e-6, 1e6, "scale of the outlier channels"),
      flag_field("smooth_swiglu", &O::smooth_swiglu,
                 "Smooth-SwiGLU (Fishman et al. 2024): divide up_proj's output by its per-token "
                 "max before the down projection, multiply its output back"),
  });
  return workload_presets<O>(
      fields, make_llama_workload,
      {"llama-xs:layers=2,d_model=128,heads=4,context=64,batch=8,steps=200,eval_every=25,"
       "warmup=20,lr=0.003,final_lr_fraction=0.1,weight_decay=0.1,beta2=0.95,grad_clip=1",
       "llama-s:layers=4,d_model=256,heads=4,context=128,batch=16,eval_windows=512,"
       "steps=1000,eval_every=50,warmup=50,lr=0.002",
       "llama-m:layers=8,d_model=512,heads=8,context=256,batch=32,eval_windows=400,"
       "steps=5000,eval_every=250,warmup=250,lr=0.001"});
}

}  // namespace fp8lab::experiments
