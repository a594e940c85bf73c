#include "experiments/workloads/gpt_workload.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/text_corpus.hpp"

namespace fp8lab::experiments {
namespace {

// GPT-2's initialisation: N(0, 0.02) for embeddings and Linears, the residual projections scaled
// by 1/sqrt(2 * layers), biases zero, LayerNorm (1, 0).
void init_normal(torch::Tensor& weight, double std, torch::Generator& generator) {
  torch::NoGradGuard no_grad;
  weight.normal_(0.0, std, generator);
}

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
  Block(const GptOptions& o, torch::Generator& generator) : heads_(o.heads) {
    const auto d = o.embedding;
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
  GptModel(const GptOptions& o, std::int64_t vocabulary, std::uint64_t seed) {
    auto generator = make_generator(seed, 0);
    token_embedding_ =
        register_module("token_embedding", torch::nn::Embedding(vocabulary, o.embedding));
    init_normal(token_embedding_->weight, 0.02, generator);
    position_embedding_ =
        register_module("position_embedding", torch::nn::Embedding(o.context, o.embedding));
    init_normal(position_embedding_->weight, 0.02, generator);
    for (std::int64_t i = 0; i < o.layers; ++i) {
      blocks_.push_back(
          register_module("block" + std::to_string(i), std::make_shared<Block>(o, generator)));
    }
    ln_final_ = register_module("ln_final",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.embedding})));
    register_module("head", make_linear(o.embedding, vocabulary, true, 0.02, generator));
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

class GptWorkload : public Workload {
 public:
  explicit GptWorkload(GptOptions options) : options_(std::move(options)) {
    if (options_.embedding % options_.heads != 0) {
      throw std::invalid_argument("gpt workload " + options_.name + ": embedding " +
                                  std::to_string(options_.embedding) +
                                  " is not a multiple of heads " + std::to_string(options_.heads));
    }
    const auto corpus = read_text_corpus(options_.corpus_directory);
    vocabulary_ = corpus.vocabulary_size_padded;
    train_ = torch::tensor(corpus.train, torch::kLong);
    eval_tokens_ = torch::tensor(corpus.eval, torch::kLong);
    if (eval_tokens_.size(0) <= options_.context + 1) {
      throw std::runtime_error("gpt workload: the eval split of " + options_.corpus_directory +
                               " is shorter than one context window");
    }
    // Eval windows at evenly spaced offsets of the eval split: fixed, no randomness.
    const auto windows = options_.eval_batches * options_.batch_size;
    const auto last = eval_tokens_.size(0) - options_.context - 1;
    auto offsets = torch::linspace(0, static_cast<double>(last), windows).to(torch::kLong);
    for (std::int64_t b = 0; b < options_.eval_batches; ++b) {
      eval_.push_back(windows_at(
          eval_tokens_, offsets.slice(0, b * options_.batch_size, (b + 1) * options_.batch_size)));
    }
    corpus_characters_ = static_cast<std::int64_t>(corpus.train.size() + corpus.eval.size());
  }

  std::string name() const override { return options_.name; }
  std::string description() const override {
    return "GPT " + std::to_string(options_.layers) +
           " layers, d=" + std::to_string(options_.embedding) + ", " +
           std::to_string(options_.heads) + " heads, context " + std::to_string(options_.context) +
           ", batch " + std::to_string(options_.batch_size) + ", characters of " +
           options_.corpus_directory + " (" + std::to_string(corpus_characters_) +
           " bytes, vocabulary " + std::to_string(vocabulary_) + " padded)";
  }
  TrainingSchedule schedule() const override {
    auto s = options_.schedule;
    s.tokens_per_batch = options_.batch_size * options_.context;
    return s;
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<GptModel>(options_, vocabulary_, seed);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    auto generator = make_generator(seed, static_cast<std::uint64_t>(step) + 1);
    const auto last = train_.size(0) - options_.context - 1;
    auto offsets = torch::randint(0, last + 1, {options_.batch_size}, generator, torch::kLong);
    return windows_at(train_, offsets);
  }
  std::vector<Batch> eval_batches() const override { return eval_; }

 private:
  Batch windows_at(const torch::Tensor& tokens, const torch::Tensor& offsets) const {
    auto index = offsets.unsqueeze(1) + torch::arange(options_.context + 1, torch::kLong);
    auto windows = tokens.index({index});
    return Batch{windows.slice(1, 0, options_.context).contiguous(),
                 windows.slice(1, 1, options_.context + 1).contiguous()};
  }

  GptOptions options_;
  std::int64_t vocabulary_ = 0;
  std::int64_t corpus_characters_ = 0;
  torch::Tensor train_, eval_tokens_;
  std::vector<Batch> eval_;
};

}  // namespace

GptOptions gpt_tiny_options() { return GptOptions{}; }

GptOptions gpt_small_options() {
  GptOptions o;
  o.name = "gpt-small";
  o.context = 64;
  o.embedding = 64;
  o.layers = 2;
  o.heads = 4;
  o.batch_size = 16;
  o.eval_batches = 8;
  o.schedule.steps = 400;
  o.schedule.eval_every = 25;
  o.schedule.warmup_steps = 20;
  o.schedule.learning_rate = 2e-3;
  return o;
}

std::unique_ptr<Workload> make_gpt_workload(const GptOptions& options) {
  return std::make_unique<GptWorkload>(options);
}

WorkloadOptionTable gpt_option_table(const GptOptions& d) {
  WorkloadOptionTable table{
      integer_option("context", d.context, 2, 65536, "tokens per training window"),
      integer_option("d_model", d.embedding, 1, 65536, "embedding width"),
      integer_option("layers", d.layers, 1, 1024, "transformer blocks"),
      integer_option("heads", d.heads, 1, 1024, "attention heads (must divide d_model)"),
      integer_option("batch", d.batch_size, 1, 1 << 20, "windows per training batch"),
      integer_option("eval_batches", d.eval_batches, 1, 1 << 20, "batches of the eval set"),
  };
  for (auto& o : schedule_option_table(d.schedule)) table.push_back(std::move(o));
  return table;
}

GptOptions gpt_options_from(GptOptions o, const WorkloadOptionValues& values) {
  o.context = values.integer("context");
  o.embedding = values.integer("d_model");
  o.layers = values.integer("layers");
  o.heads = values.integer("heads");
  o.batch_size = values.integer("batch");
  o.eval_batches = values.integer("eval_batches");
  o.schedule = schedule_from(o.schedule, values);
  return o;
}

}  // namespace fp8lab::experiments
