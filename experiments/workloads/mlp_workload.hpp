// Workload "mlp" / "mlp-outliers": a 3-layer MLP regressing a fixed random teacher network on
// Gaussian inputs. A few input features are multiplied by outlier_scale, the way a handful of
// channels dominate transformer activations: with one scale per tensor, the other features then
// sit near the bottom of the FP8 range, which is what per-tensor scaling recipes must survive.
#pragma once

#include <vector>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// mlp, and mlp-outliers (4 outlier features x100). Options inputs, hidden, outputs, batch,
// outlier_features, outlier_scale, eval_batches and the schedule's.
std::vector<WorkloadPreset> mlp_workloads();

}  // namespace fp8lab::experiments
