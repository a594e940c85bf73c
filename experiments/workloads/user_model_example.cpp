// A user's model as a user would write it: a small residual MLP classifier on a 2-D spiral, with
// its own parameter names. Nothing in it is special to fp8lab beyond the four steps listed in
// user_model_example.hpp.
#include "experiments/workloads/user_model_example.hpp"

#include <cmath>
#include <numbers>

#include "experiments/workloads/linear_call.hpp"

namespace fp8lab::experiments {
namespace {

constexpr std::int64_t kClasses = 16;
constexpr std::int64_t kWidth = 64;
constexpr std::int64_t kBatch = 128;

class SpiralClassifier : public TrainableModel {
 public:
  explicit SpiralClassifier(std::uint64_t seed) {
    auto generator = make_generator(seed, 0);
    for (const auto& [name, in, out] :
         {std::tuple{"embed", std::int64_t{16}, kWidth}, std::tuple{"residual", kWidth, kWidth},
          std::tuple{"classify", kWidth, kClasses}}) {
      auto linear = register_module(name, torch::nn::Linear(in, out));
      torch::NoGradGuard no_grad;
      linear->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(in)), generator);
      linear->bias.zero_();
    }
  }
  torch::Tensor loss(const Batch& batch) override {
    // Fourier features of the 2-D point make the 16 inputs of the first Linear.
    auto angles = torch::matmul(batch.input, frequencies().to(batch.input.device()));
    auto features = torch::cat({torch::sin(angles), torch::cos(angles)}, 1);
    auto h = torch::relu(forward_linear(*this, "embed", features));
    h = h + torch::relu(forward_linear(*this, "residual", h));
    return torch::cross_entropy_loss(forward_linear(*this, "classify", h), batch.target);
  }

 private:
  static torch::Tensor frequencies() {
    static const torch::Tensor f = torch::linspace(0.5, 4.0, 8).repeat({2, 1}) *
                                   torch::tensor({{1.0f}, {-1.0f}});
    return f;
  }
};

class SpiralWorkload : public Workload {
 public:
  std::string name() const override { return "user-example"; }
  std::string description() const override {
    return "example of a user's model: residual MLP classifying a 16-arm spiral";
  }
  TrainingSchedule schedule() const override {
    // Only what differs from TrainingSchedule's defaults (workload.hpp): AdamW betas (0.9, 0.99),
    // no weight decay, no gradient clipping.
    return TrainingSchedule{.steps = 100,
                            .eval_every = 20,
                            .warmup_steps = 5,
                            .learning_rate = 3e-3,
                            .final_lr_fraction = 0.1,
                            .tokens_per_batch = kBatch};
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<SpiralClassifier>(seed);
  }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    return spiral(step_generator(seed, step));
  }
  std::vector<Batch> eval_batches() const override {
    return {spiral(make_generator(0x5EED, 1ULL << 62))};
  }

 private:
  static Batch spiral(torch::Generator generator) {
    auto label = torch::randint(0, kClasses, {kBatch}, generator, torch::kLong);
    auto radius = torch::rand({kBatch}, generator);
    auto angle = label.to(torch::kFloat) * (2.0 * std::numbers::pi / kClasses) + 3.0 * radius +
                 0.1 * torch::randn({kBatch}, generator);
    auto point = torch::stack({radius * torch::cos(angle), radius * torch::sin(angle)}, 1);
    return Batch{point, label};
  }
};

}  // namespace

std::unique_ptr<Workload> make_user_model_example() { return std::make_unique<SpiralWorkload>(); }

}  // namespace fp8lab::experiments
