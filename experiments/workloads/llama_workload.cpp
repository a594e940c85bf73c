#include "experiments/workloads/llama_workload.hpp"

#include <cmath>
#include <stdexcept>

#include "experiments/workloads/bpe_corpus.hpp"
#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/llama_modules.hpp"

namespace fp8lab::experiments {
namespace {

// N(0, 0.02) for the embedding and every Linear, the residual projections (o_proj, down_proj)
// scaled by 1/sqrt(2 layers) as GPT-2 and OLMo do; RMSNorm weights 1. Drawn from one generator in
// registration order.
void init_normal(torch::Tensor& weight, double std, torch::Generator& generator) {
  torch::NoGradGuard no_grad;
  weight.normal_(0.0, std, generator);
}

class LlamaModel : public TrainableModel {
 public:
  LlamaModel(const LlamaOptions& o, std::int64_t vocabulary, std::uint64_t seed)
      : fp8_head_(o.fp8_head) {
    auto generator = make_generator(seed, 0);
    const auto d = o.d_model;
    const auto ffn = o.ffn > 0 ? o.ffn : llama_default_ffn(d);
    token_embedding_ = register_module("token_embedding", torch::nn::Embedding(vocabulary, d));
    init_normal(token_embedding_->weight, 0.02, generator);
    auto channel_scale = torch::ones({d});
    if (o.outlier_channels > 0) {
      channel_scale.slice(0, 0, std::min(o.outlier_channels, d)).fill_(o.outlier_scale);
    }
    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(o.layers));
    for (std::int64_t i = 0; i < o.layers; ++i) {
      auto block = register_module("block" + std::to_string(i),
                                   LlamaBlock(d, o.heads, ffn, channel_scale.clone()));
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
    rope_ = rope_tables(o.context, d / o.heads, o.rope_base);
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

class LlamaWorkload : public Workload {
 public:
  explicit LlamaWorkload(LlamaOptions options) : options_(std::move(options)) {
    if (options_.d_model % options_.heads != 0 || (options_.d_model / options_.heads) % 2 != 0) {
      throw std::invalid_argument("workload " + options_.name + ": d_model " +
                                  std::to_string(options_.d_model) + " / heads " +
                                  std::to_string(options_.heads) +
                                  " must be a whole, even head dimension (RoPE pairs channels)");
    }
    corpus_ = read_bpe_corpus(options_.corpus_directory.empty() ? default_bpe_corpus_directory()
                                                                : options_.corpus_directory);
    train_ = torch::tensor(corpus_.train, torch::kLong);
    const auto eval_tokens = torch::tensor(corpus_.eval, torch::kLong);
    const auto last = eval_tokens.size(0) - options_.context - 1;
    if (last < 0) {
      throw std::runtime_error("workload " + options_.name + ": the eval split of " +
                               corpus_.directory.string() + " is shorter than one window");
    }
    // Eval windows at evenly spaced offsets of the eval split (fixed, no randomness); they do not
    // overlap while eval_windows * (context + 1) fits in the split.
    const auto windows = options_.eval_windows;
    const auto offsets = torch::linspace(0, static_cast<double>(last), windows).to(torch::kLong);
    for (std::int64_t b = 0; b < windows; b += options_.batch_size) {
      eval_.push_back(
          windows_at(eval_tokens, offsets.slice(0, b, std::min(windows, b + options_.batch_size))));
    }
  }

  std::string name() const override { return options_.name; }
  std::string description() const override {
    const auto ffn = options_.ffn > 0 ? options_.ffn : llama_default_ffn(options_.d_model);
    std::string text =
        "Llama " + std::to_string(options_.layers) + " layers, d_model " +
        std::to_string(options_.d_model) + ", " + std::to_string(options_.heads) +
        " heads, SwiGLU " + std::to_string(ffn) + ", context " + std::to_string(options_.context) +
        ", batch " + std::to_string(options_.batch_size) + ", head " +
        (options_.fp8_head ? "a Linear (FP8 if the recipe's filter allows)" : "fp32") + ", eval " +
        std::to_string(options_.eval_windows) + " windows";
    if (options_.outlier_channels > 0) {
      text += ", " + std::to_string(options_.outlier_channels) + " outlier channels x" +
              std::to_string(options_.outlier_scale);
    }
    return text + "; " + corpus_.description;
  }
  TrainingSchedule schedule() const override {
    auto s = options_.schedule;
    s.tokens_per_batch = options_.batch_size * options_.context;
    return s;
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<LlamaModel>(options_, corpus_.vocabulary, seed);
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

  LlamaOptions options_;
  BpeCorpus corpus_;
  torch::Tensor train_;
  std::vector<Batch> eval_;
};

}  // namespace

std::int64_t llama_default_ffn(std::int64_t d_model) { return (8 * d_model / 3 + 31) / 32 * 32; }

LlamaOptions llama_xs_options() { return LlamaOptions{}; }

LlamaOptions llama_s_options() {
  LlamaOptions o;
  o.name = "llama-s";
  o.layers = 4;
  o.d_model = 256;
  o.heads = 4;
  o.context = 128;
  o.batch_size = 16;
  o.eval_windows = 512;
  o.schedule.steps = 1000;
  o.schedule.eval_every = 50;
  o.schedule.warmup_steps = 50;
  o.schedule.learning_rate = 2e-3;
  return o;
}

LlamaOptions llama_m_options() {
  LlamaOptions o;
  o.name = "llama-m";
  o.layers = 8;
  o.d_model = 512;
  o.heads = 8;
  o.context = 256;
  o.batch_size = 32;
  o.eval_windows = 400;
  o.schedule.steps = 5000;
  o.schedule.eval_every = 250;
  o.schedule.warmup_steps = 250;
  o.schedule.learning_rate = 1e-3;
  return o;
}

std::unique_ptr<Workload> make_llama_workload(const LlamaOptions& options) {
  return std::make_unique<LlamaWorkload>(options);
}

WorkloadOptionTable llama_option_table(const LlamaOptions& d) {
  WorkloadOptionTable table{
      integer_option("layers", d.layers, 1, 1024, "transformer blocks"),
      integer_option("d_model", d.d_model, 2, 65536, "residual stream width"),
      integer_option("heads", d.heads, 1, 1024,
                     "attention heads (d_model / heads must be even: RoPE pairs channels)"),
      integer_option("ffn", d.ffn, 0, 1 << 20,
                     "SwiGLU hidden size (0: 8/3 d_model rounded up to a multiple of 32)"),
      integer_option("context", d.context, 2, 65536, "tokens per window"),
      integer_option("batch", d.batch_size, 1, 1 << 20, "windows per training batch"),
      integer_option("eval_windows", d.eval_windows, 1, 1 << 20,
                     "windows of the eval split per evaluation (evenly spaced)"),
      real_option("rope_base", d.rope_base, 1.0, 1e9, "RoPE base (theta)"),
      flag_option("fp8_head", d.fp8_head,
                  "make the LM head a Linear the recipe may convert (default: fp32 matmul)"),
      integer_option("outlier_channels", d.outlier_channels, 0, 65536,
                     "the first N channels of each block's normalized inputs are scaled by "
                     "outlier_scale"),
      real_option("outlier_scale", d.outlier_scale, 1e-6, 1e6, "scale of the outlier channels"),
  };
  for (auto& o : schedule_option_table(d.schedule)) table.push_back(std::move(o));
  return table;
}

LlamaOptions llama_options_from(LlamaOptions o, const WorkloadOptionValues& values) {
  o.layers = values.integer("layers");
  o.d_model = values.integer("d_model");
  o.heads = values.integer("heads");
  o.ffn = values.integer("ffn");
  o.context = values.integer("context");
  o.batch_size = values.integer("batch");
  o.eval_windows = values.integer("eval_windows");
  o.rope_base = values.real("rope_base");
  o.fp8_head = values.flag("fp8_head");
  o.outlier_channels = values.integer("outlier_channels");
  o.outlier_scale = values.real("outlier_scale");
  o.schedule = schedule_from(o.schedule, values);
  return o;
}

}  // namespace fp8lab::experiments
