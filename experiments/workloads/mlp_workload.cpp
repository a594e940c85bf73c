#include "experiments/workloads/mlp_workload.hpp"

#include <cmath>

#include "experiments/workloads/linear_call.hpp"

namespace fp8lab::experiments {
namespace {

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

class MlpWorkload : public Workload {
 public:
  explicit MlpWorkload(MlpOptions options) : options_(std::move(options)) {
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
      // Eval data: its own generator streams, disjoint from training steps (stream >= 2^62).
      eval_.push_back(
          make_batch(make_generator(0xE7A1, (1ULL << 62) + static_cast<std::uint64_t>(i))));
    }
  }
  std::string name() const override { return options_.name; }
  std::string description() const override {
    return "MLP " + std::to_string(options_.input_features) + "-" +
           std::to_string(options_.hidden_features) + "-" +
           std::to_string(options_.hidden_features) + "-" +
           std::to_string(options_.output_features) + " regressing a random teacher, " +
           std::to_string(options_.outlier_features) + " outlier features x" +
           std::to_string(options_.outlier_scale);
  }
  TrainingSchedule schedule() const override {
    auto s = options_.schedule;
    s.tokens_per_batch = options_.batch_size;
    return s;
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<MlpModel>(options_, seed);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    auto generator = make_generator(seed, static_cast<std::uint64_t>(step) + 1);
    return make_batch(generator);
  }
  std::vector<Batch> eval_batches() const override { return eval_; }

 private:
  Batch make_batch(torch::Generator generator) const {
    torch::NoGradGuard no_grad;
    auto z = torch::randn({options_.batch_size, options_.input_features}, generator);
    auto target = torch::matmul(torch::tanh(torch::matmul(z, teacher_w1_)), teacher_w2_);
    return Batch{z * feature_scale_, target};
  }

  MlpOptions options_;
  torch::Tensor teacher_w1_, teacher_w2_, feature_scale_;
  std::vector<Batch> eval_;
};

}  // namespace

std::unique_ptr<Workload> make_mlp_workload(const MlpOptions& options) {
  return std::make_unique<MlpWorkload>(options);
}

WorkloadOptionTable mlp_option_table(const MlpOptions& d) {
  WorkloadOptionTable table{
      integer_option("inputs", d.input_features, 1, 65536, "input features"),
      integer_option("hidden", d.hidden_features, 1, 65536, "hidden width"),
      integer_option("outputs", d.output_features, 1, 65536, "output features"),
      integer_option("batch", d.batch_size, 1, 1 << 20, "samples per batch"),
      integer_option("outlier_features", d.outlier_features, 0, 65536,
                     "the first N input features are scaled by outlier_scale"),
      real_option("outlier_scale", d.outlier_scale, 1e-6, 1e6, "scale of the outlier features"),
      integer_option("eval_batches", d.eval_batches, 1, 1 << 20, "batches of the eval set"),
  };
  for (auto& o : schedule_option_table(d.schedule)) table.push_back(std::move(o));
  return table;
}

MlpOptions mlp_options_from(MlpOptions o, const WorkloadOptionValues& values) {
  o.input_features = values.integer("inputs");
  o.hidden_features = values.integer("hidden");
  o.output_features = values.integer("outputs");
  o.batch_size = values.integer("batch");
  o.outlier_features = values.integer("outlier_features");
  o.outlier_scale = values.real("outlier_scale");
  o.eval_batches = values.integer("eval_batches");
  o.schedule = schedule_from(o.schedule, values);
  return o;
}

}  // namespace fp8lab::experiments
