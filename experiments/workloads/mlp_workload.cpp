#include "experiments/workloads/mlp_workload.hpp"

#include <cmath>

#include "experiments/workloads/linear_call.hpp"

namespace fp8lab::experiments {
namespace {

struct MlpOptions {
  std::int64_t input_features = 64;
  std::int64_t hidden_features = 128;
  std::int64_t output_features = 16;
  std::int64_t batch_size = 64;
  std::int64_t outlier_features = 0;  // the first N input features are scaled by outlier_scale
  double outlier_scale = 1.0;
  std::int64_t eval_batches = 4;
  // Every other field is TrainingSchedule's (tokens_per_batch: batch, set by OptionsWorkload).
  TrainingSchedule schedule{.steps = 200,
                            .eval_every = 20,
                            .warmup_steps = 10,
                            .learning_rate = 2e-3,
                            .final_lr_fraction = 0.1};
};

// Linear weights ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) like torch's default, biases zero, drawn
// from one generator in registration order.
void init_linear(torch::nn::LinearImpl& linear, torch::Generator& generator) {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(linear.options.in_features()));
  linear.weight.uniform_(-bound, bound, generator);
  if (linear.bias.defined()) linear.bias.zero_();
}

class MlpModel : public TrainableModel {
 public:
  MlpModel(const MlpOptions& o, std::uint64_t seed) {
    auto generator = make_generator(seed, 0);
    auto add = [&](const char* name, std::int64_t in, std::int64_t out) {
      auto linear = register_module(name, torch::nn::Linear(in, out));
      init_linear(*linear, generator);
    };
    add("fc1", o.input_features, o.hidden_features);
    add("fc2", o.hidden_features, o.hidden_features);
    add("fc3", o.hidden_features, o.output_features);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::gelu(forward_linear(*this, "fc1", x));
    h = torch::gelu(forward_linear(*this, "fc2", h));
    return forward_linear(*this, "fc3", h);
  }
  torch::Tensor loss(const Batch& batch) override {
    return torch::mse_loss(forward(batch.input), batch.target);
  }
};

class MlpWorkload : public OptionsWorkload<MlpOptions> {
 public:
  MlpWorkload(std::string name, MlpOptions options)
      : OptionsWorkload(std::move(name), std::move(options)) {
    // The teacher: a fixed random 2-layer network (seed-independent, so that every seed learns the
    // same function), evaluated on the un-scaled features so that outliers change the inputs'
    // range but not the difficulty of the task.
    auto generator = make_generator(0x7EAC4E2, 0);
    const auto in = options_.input_features;
    teacher_w1_ = torch::randn({in, in}, generator) / std::sqrt(static_cast<double>(in));
    teacher_w2_ = torch::randn({in, options_.output_features}, generator) /
                  std::sqrt(static_cast<double>(in));
    feature_scale_ = torch::ones({in});
    const auto n = std::min(options_.outlier_features, in);
    if (n > 0) feature_scale_.slice(0, 0, n).fill_(options_.outlier_scale);
    for (std::int64_t i = 0; i < options_.eval_batches; ++i) {
      eval_.push_back(make_batch(eval_generator(i)));
    }
  }
  std::string description() const override {
    return "MLP " + std::to_string(options_.input_features) + "-" +
           std::to_string(options_.hidden_features) + "-" +
           std::to_string(options_.hidden_features) + "-" +
           std::to_string(options_.output_features) + " regressing a random teacher, " +
           std::to_string(options_.outlier_features) + " outlier features x" +
           std::to_string(options_.outlier_scale);
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<MlpModel>(options_, seed);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    return make_batch(step_generator(seed, step));
  }

 private:
  Batch make_batch(torch::Generator generator) const {
    torch::NoGradGuard no_grad;
    auto z = torch::randn({options_.batch_size, options_.input_features}, generator);
    auto target = torch::matmul(torch::tanh(torch::matmul(z, teacher_w1_)), teacher_w2_);
    return Batch{z * feature_scale_, target};
  }

  torch::Tensor teacher_w1_, teacher_w2_, feature_scale_;
};

}  // namespace

std::vector<WorkloadPreset> mlp_workloads() {
  using O = MlpOptions;
  const auto fields = with_schedule_fields<O>({
      integer_field("inputs", &O::input_features, 1, 65536, "input features"),
      integer_field("hidden", &O::hidden_features, 1, 65536, "hidden width"),
      integer_field("outputs", &O::output_features, 1, 65536, "output features"),
      integer_field("batch", &O::batch_size, 1, 1 << 20, "samples per batch"),
      integer_field("outlier_features", &O::outlier_features, 0, 65536,
                    "the first N input features are scaled by outlier_scale"),
      real_field("outlier_scale", &O::outlier_scale, 1e-6, 1e6, "scale of the outlier features"),
      integer_field("eval_batches", &O::eval_batches, 1, 1 << 20, "batches of the eval set"),
  });
  return workload_presets<O>(fields, construct_workload<MlpWorkload, O>,
                             {"mlp", "mlp-outliers:outlier_features=4,outlier_scale=100"});
}

}  // namespace fp8lab::experiments
