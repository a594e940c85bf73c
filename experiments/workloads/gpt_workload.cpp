#include "experiments/workloads/gpt_workload.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiments/workloads/language_model_workload.hpp"
#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/text_corpus.hpp"

namespace fp8lab::experiments {
namespace {

struct GptOptions {
  LanguageModelOptions model;
  std::int64_t eval_batches = 4;  // the eval set: eval_batches x batch windows
  std::string corpus_directory = "/usr/share/common-licenses";
};

// GPT-2's initialisation: N(0, 0.02) for embeddings and Linears, the residual projections scaled
// by 1/sqrt(2 * layers), biases zero, LayerNorm (1, 0).
torch::nn::Linear make_linear(std::int64_t in, std::int64_t out, bool bias, double std,
                              torch::Generator& generator) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out).bias(bias));
  init_normal(linear->weight, std, generator);
  if (bias) {
    torch::NoGradGuard no_grad;
    linear->bias.zero_();
  }
  return linear;
}

class Block : public torch::nn::Module {
 public:
  Block(const LanguageModelOptions& o, torch::Generator& generator) : heads_(o.heads) {
    const auto d = o.d_model;
    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers));
    ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    register_module("qkv", make_linear(d, 3 * d, true, 0.02, generator));
    register_module("attn_proj", make_linear(d, d, true, residual_std, generator));
    ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    register_module("mlp_fc", make_linear(d, 4 * d, true, 0.02, generator));
    register_module("mlp_proj", make_linear(4 * d, d, true, residual_std, generator));
  }

  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& causal_mask) {
    const auto batch = x.size(0), time = x.size(1), channels = x.size(2);
    const auto head_dim = channels / heads_;
    auto qkv = forward_linear(*this, "qkv", ln1_->forward(x)).split(channels, 2);
    auto heads = [&](const torch::Tensor& t) {
      return t.view({batch, time, heads_, head_dim}).transpose(1, 2);
    };
    auto q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
    scores = scores.masked_fill(causal_mask, -std::numeric_limits<float>::infinity());
    auto attended = torch::matmul(torch::softmax(scores, -1), v)
                        .transpose(1, 2)
                        .contiguous()
                        .view({batch, time, channels});
    auto h = x + forward_linear(*this, "attn_proj", attended);
    auto m = torch::gelu(forward_linear(*this, "mlp_fc", ln2_->forward(h)));
    return h + forward_linear(*this, "mlp_proj", m);
  }

 private:
  std::int64_t heads_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
};

class GptModel : public TrainableModel {
 public:
  GptModel(const LanguageModelOptions& o, std::int64_t vocabulary, std::uint64_t seed) {
    auto generator = make_generator(seed, 0);
    token_embedding_ =
        register_module("token_embedding", torch::nn::Embedding(vocabulary, o.d_model));
    init_normal(token_embedding_->weight, 0.02, generator);
    position_embedding_ =
        register_module("position_embedding", torch::nn::Embedding(o.context, o.d_model));
    init_normal(position_embedding_->weight, 0.02, generator);
    for (std::int64_t i = 0; i < o.layers; ++i) {
      blocks_.push_back(
          register_module("block" + std::to_string(i), std::make_shared<Block>(o, generator)));
    }
    ln_final_ =
        register_module("ln_final", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
    register_module("head", make_linear(o.d_model, vocabulary, true, 0.02, generator));
    causal_mask_ = torch::ones({o.context, o.context}, torch::kBool).triu(1);
  }

  torch::Tensor loss(const Batch& batch) override {
    const auto time = batch.input.size(1);
    // On the batch's device (a model and batch moved to CUDA; a no-op on the CPU).
    const auto device = batch.input.device();
    auto positions = torch::arange(time, torch::TensorOptions().dtype(torch::kLong).device(device));
    auto x = token_embedding_->forward(batch.input) + position_embedding_->forward(positions);
    const auto mask = causal_mask_.slice(0, 0, time).slice(1, 0, time).to(device);
    for (auto& block : blocks_) x = block->forward(x, mask);
    auto logits = forward_linear(*this, "head", ln_final_->forward(x));
    return torch::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}),
                                     batch.target.reshape({-1}));
  }

 private:
  torch::nn::Embedding token_embedding_{nullptr}, position_embedding_{nullptr};
  std::vector<std::shared_ptr<Block>> blocks_;
  torch::nn::LayerNorm ln_final_{nullptr};
  torch::Tensor causal_mask_;
};

std::unique_ptr<Workload> make_gpt_workload(const std::string& name, const GptOptions& options) {
  const auto& o = options.model;
  if (o.d_model % o.heads != 0) {
    throw std::invalid_argument("gpt workload " + name + ": d_model " + std::to_string(o.d_model) +
                                " is not a multiple of heads " + std::to_string(o.heads));
  }
  const auto corpus = read_text_corpus(options.corpus_directory);
  const auto vocabulary = corpus.vocabulary_size_padded;
  const auto characters = corpus.train.size() + corpus.eval.size();
  const auto description =
      "GPT " + std::to_string(o.layers) + " layers, d=" + std::to_string(o.d_model) + ", " +
      std::to_string(o.heads) + " heads, context " + std::to_string(o.context) + ", batch " +
      std::to_string(o.batch_size) + ", characters of " + options.corpus_directory + " (" +
      std::to_string(characters) + " bytes, vocabulary " + std::to_string(vocabulary) + " padded)";
  return make_language_model_workload(
      name, o, options.eval_batches * o.batch_size,
      token_splits(corpus.train, corpus.eval, options.corpus_directory), description,
      [o, vocabulary](std::uint64_t seed) {
        return std::make_shared<GptModel>(o, vocabulary, seed);
      });
}

}  // namespace

std::vector<WorkloadPreset> gpt_workloads() {
  using O = GptOptions;
  return workload_presets<O>(
      language_model_option_fields<O>(
          {integer_field("eval_batches", &O::eval_batches, 1, 1 << 20, "batches of the eval set")}),
      make_gpt_workload,
      {"gpt-tiny:layers=1,d_model=32,heads=2,context=32,batch=8,steps=60,warmup=5,lr=0.003,"
       "final_lr_fraction=0.1,weight_decay=0.01",
       "gpt-small:context=64,d_model=64,layers=2,heads=4,batch=16,eval_batches=8,"
       "steps=400,eval_every=25,warmup=20,lr=0.002"});
}

}  // namespace fp8lab::experiments
