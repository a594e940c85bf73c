#include "experiments/workloads/residual_mlp_workload.hpp"

#include <cmath>

#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/llama_modules.hpp"

namespace fp8lab::experiments {
namespace {

struct ResidualMlpOptions {
  std::int64_t d = 512;
  std::int64_t depth = 4;
  std::string activation = "gelu";  // gelu | swiglu
  std::int64_t batch_size = 2048;
  double noise = 1e-3;
  std::int64_t eval_batches = 4;
  std::int64_t eval_batch_size = 2048;
  std::string teacher = "data";       // data | model
  std::string norm_bias = "trained";  // trained | frozen
  // Their script's Adam: lr 1e-3, betas (0.9, 0.999). Every other field is TrainingSchedule's,
  // which are theirs too: no warm-up, constant lr, no weight decay, no clipping (tokens_per_batch:
  // batch, set by OptionsWorkload).
  TrainingSchedule schedule{
      .steps = 7000, .eval_every = 200, .learning_rate = 1e-3, .beta1 = 0.9, .beta2 = 0.999};
};

// torch.nn.Linear's default: weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
void init_uniform(torch::nn::Module& module, torch::Generator& generator) {
  torch::NoGradGuard no_grad;
  for (auto& child : module.modules(/*include_self=*/false)) {
    auto* linear = dynamic_cast<torch::nn::LinearImpl*>(child.get());
    if (linear == nullptr) continue;
    const double bound = 1.0 / std::sqrt(static_cast<double>(linear->options.in_features()));
    linear->weight.uniform_(-bound, bound, generator);
    if (linear->bias.defined()) linear->bias.uniform_(-bound, bound, generator);
  }
}

torch::Tensor swiglu_halves(const torch::Tensor& u) {
  const auto halves = u.chunk(2, -1);
  return halves[0] * torch::silu(halves[1]);
}

// The frozen teacher: per block Linear(d, h_in) -> act -> Linear(h, d), no residual, no bias.
class Teacher {
 public:
  explicit Teacher(const ResidualMlpOptions& o) : swiglu_(o.activation == "swiglu") {
    auto generator = make_generator(0x7EAC4E25, 0);  // seed-independent: one function to learn
    // Their teacher_width defaults to the width: h = d; SwiGLU h = round(2d/3), same parameters.
    const auto h = swiglu_ ? (4 * o.d + 3) / 6 : o.d;
    const auto h_in = swiglu_ ? 2 * h : h;
    for (std::int64_t i = 0; i < o.depth; ++i) {
      const double bound_in = 1.0 / std::sqrt(static_cast<double>(o.d));
      const double bound_out = 1.0 / std::sqrt(static_cast<double>(h));
      w_in_.push_back(torch::empty({h_in, o.d}).uniform_(-bound_in, bound_in, generator));
      w_out_.push_back(torch::empty({o.d, h}).uniform_(-bound_out, bound_out, generator));
    }
  }
  torch::Tensor operator()(torch::Tensor x) const {
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < w_in_.size(); ++i) {
      const auto u = torch::linear(x, w_in_[i]);
      x = torch::linear(swiglu_ ? swiglu_halves(u) : torch::gelu(u), w_out_[i]);
    }
    return x;
  }
  bool swiglu() const { return swiglu_; }
  const std::vector<torch::Tensor>& w_in() const { return w_in_; }
  const std::vector<torch::Tensor>& w_out() const { return w_out_; }

 private:
  bool swiglu_;
  std::vector<torch::Tensor> w_in_, w_out_;
};

// The same teacher as a frozen part of the model (option teacher: model): its Linears are
// registered children, so that convert_model gives them the student's FP8 / high-precision Linear.
class TeacherBlocks : public torch::nn::Module {
 public:
  explicit TeacherBlocks(const Teacher& teacher) : swiglu_(teacher.swiglu()) {
    for (std::size_t i = 0; i < teacher.w_in().size(); ++i) {
      auto block = std::make_shared<torch::nn::Module>();
      for (const auto& [name, w] :
           {std::pair{"fc1", teacher.w_in()[i]}, std::pair{"fc2", teacher.w_out()[i]}}) {
        torch::nn::Linear linear(torch::nn::LinearOptions(w.size(1), w.size(0)).bias(false));
        linear->weight.set_data(w.clone());
        linear->weight.set_requires_grad(false);
        block->register_module(name, linear);
      }
      blocks_.push_back(register_module("block" + std::to_string(i), block));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::NoGradGuard no_grad;
    for (auto& block : blocks_) {
      const auto u = forward_linear(*block, "fc1", x);
      x = forward_linear(*block, "fc2", swiglu_ ? swiglu_halves(u) : torch::gelu(u));
    }
    return x;
  }

 private:
  bool swiglu_;
  std::vector<std::shared_ptr<torch::nn::Module>> blocks_;
};

class ResidualMlpModel : public TrainableModel {
 public:
  // `teacher`: the teacher inside the model (teacher: model), else nullptr (targets come in the
  // batches).
  ResidualMlpModel(const ResidualMlpOptions& o, std::uint64_t seed, const Teacher* teacher) {
    auto generator = make_generator(seed, 0);
    for (std::int64_t i = 0; i < o.depth; ++i) {
      blocks_.push_back(register_module("block" + std::to_string(i),
                                        ResidualBlock(o.d, o.activation, o.norm_bias == "frozen")));
    }
    init_uniform(*this, generator);  // before the teacher: the student's init as without it
    if (teacher != nullptr) {
      teacher_ = register_module("teacher", std::make_shared<TeacherBlocks>(*teacher));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& block : blocks_) x = block->forward(x);
    return x;
  }
  torch::Tensor loss(const Batch& batch) override {
    return torch::mse_loss(forward(batch.input), target(batch));
  }
  torch::Tensor example_losses(const Batch& batch) override {
    return (forward(batch.input) - target(batch)).pow(2).mean(1);
  }

 private:
  // With the teacher inside, a batch's target is the label noise alone.
  torch::Tensor target(const Batch& batch) {
    return teacher_ ? teacher_->forward(batch.input) + batch.target : batch.target;
  }
  std::vector<ResidualBlock> blocks_;
  std::shared_ptr<TeacherBlocks> teacher_;
};

class ResidualMlpWorkload : public OptionsWorkload<ResidualMlpOptions> {
 public:
  ResidualMlpWorkload(std::string name, ResidualMlpOptions options)
      : OptionsWorkload(std::move(name), std::move(options)), teacher_(options_) {
    for (std::int64_t i = 0; i < options_.eval_batches; ++i) {
      auto x = torch::randn({options_.eval_batch_size, options_.d}, eval_generator(i));
      eval_.push_back(Batch{x, in_model() ? torch::zeros_like(x) : teacher_(x)});
    }
  }
  std::string description() const override {
    return "residual MLP (Su et al. 2025) d " + std::to_string(options_.d) + ", depth " +
           std::to_string(options_.depth) + ", " + options_.activation + ", batch " +
           std::to_string(options_.batch_size) + ", label noise " + std::to_string(options_.noise) +
           ", regressing a frozen random teacher MLP";
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<ResidualMlpModel>(options_, seed, in_model() ? &teacher_ : nullptr);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    auto generator = step_generator(seed, step);
    auto x = torch::randn({options_.batch_size, options_.d}, generator);
    auto noise = torch::randn({options_.batch_size, options_.d}, generator);
    if (in_model()) return Batch{x, options_.noise * noise};
    return Batch{x, teacher_(x) + options_.noise * noise};
  }

 private:
  bool in_model() const { return options_.teacher == "model"; }
  Teacher teacher_;
};

}  // namespace

ResidualBlockImpl::ResidualBlockImpl(std::int64_t d, const std::string& activation,
                                     bool frozen_norm_bias)
    : swiglu_(activation == "swiglu") {
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  if (frozen_norm_bias) norm_->bias.set_requires_grad(false);  // stays 0 (microxcaling's LN)
  const auto h = swiglu_ ? swiglu_hidden(d) : 4 * d;
  register_module("fc1",
                  torch::nn::Linear(torch::nn::LinearOptions(d, swiglu_ ? 2 * h : h).bias(false)));
  register_module("fc2", torch::nn::Linear(torch::nn::LinearOptions(h, d).bias(true)));
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  const auto& plans = beyond_gemm_plans();
  const auto z = layer_norm_beyond_gemm(x, norm_->weight, norm_->bias, norm_->options.eps(),
                                        plans.norm_affine);
  const auto u = forward_linear(*this, "fc1", z);
  const auto act = [this](const torch::Tensor& t) {
    return swiglu_ ? swiglu_halves(t) : torch::gelu(t);
  };
  return x + forward_linear(*this, "fc2", activation_beyond_gemm(u, act, plans.activation));
}

std::vector<WorkloadPreset> residual_mlp_workloads() {
  using O = ResidualMlpOptions;
  const auto fields = with_schedule_fields<O>({
      integer_field("d", &O::d, 1, 65536, "width of the residual stream"),
      integer_field("depth", &O::depth, 1, 1024, "residual blocks (student and teacher)"),
      choice_field("activation", &O::activation, {"gelu", "swiglu"}, "activation of each block"),
      integer_field("batch", &O::batch_size, 1, 1 << 24, "samples per training batch"),
      real_field("noise", &O::noise, 0.0, 1e6, "standard deviation of the label noise"),
      integer_field("eval_batches", &O::eval_batches, 1, 1 << 20, "fixed eval batches"),
      integer_field("eval_batch", &O::eval_batch_size, 1, 1 << 24, "samples per eval batch"),
      choice_field("teacher", &O::teacher, {"data", "model"},
                   "data: targets computed in fp32 with the data; model: the teacher is a frozen "
                   "part of the model, its Linears converted with the student's"),
      choice_field("norm_bias", &O::norm_bias, {"trained", "frozen"},
                   "the LayerNorm biases: trained, or frozen at 0 (microxcaling's LayerNorm)"),
  });
  return workload_presets<O>(fields, construct_workload<ResidualMlpWorkload, O>, {"residual-mlp"});
}

}  // namespace fp8lab::experiments
