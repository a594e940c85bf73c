// Workload "mlp" / "mlp-outliers": a 3-layer MLP regressing a fixed random teacher network on
// Gaussian inputs. A few input features are multiplied by outlier_scale, the way a handful of
// channels dominate transformer activations: with one scale per tensor, the other features then
// sit near the bottom of the FP8 range, which is what per-tensor scaling recipes must survive.
#pragma once

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

struct MlpOptions {
  std::string name = "mlp";
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

std::unique_ptr<Workload> make_mlp_workload(const MlpOptions& options);

// Options inputs, hidden, outputs, batch, outlier_features, outlier_scale, eval_batches and the schedule's.
OptionFields<MlpOptions> mlp_option_fields();

}  // namespace fp8lab::experiments
