// The on-trajectory probes of a run (issue 41; rows: experiments/results/probe_sidecar.hpp),
// called by train() after each step's backward pass (TrainingOptions::after_backward):
//
// - BaselineProbes (kOnBaseline), in a baseline run: each probed recipe has its own model, made
//   as an FP8 run of that recipe makes its model (run_hooks.hpp), with its own scaling state. At
//   every probe step (every n-th and the last) the baseline's weights are copied into it by
//   parameter name, it runs the step's batch forward (in the FP8 autocast, training mode) and
//   backward, and its gradient g_q is compared with the baseline's g of that step (before
//   clipping); the per-GEMM variants and the draws of a stochastic recipe likewise.
// - ExactOnRunProbes (kExactOnRun), in an FP8 run: at the same steps, the baseline's
//   high-precision model at the run's weights and batch; g is its gradient, g_q the run's own.
//
// Neither changes the run: the probe models are other modules with their own backends' states,
// the run's gradients and optimizer are only read, and the global CPU generator (which building a
// model draws from) is restored after every call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/results/probe_sidecar.hpp"
#include "experiments/run/training.hpp"
#include "experiments/workloads/workload.hpp"
#include "recipes/probe_settings.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

// The probe steps of a run of `steps` steps: every `every`-th step from 0, and the last.
std::vector<std::int64_t> probe_steps(std::int64_t steps, std::int64_t every);

// Whether the recipe's scaling state depends on its history (delayed scaling's amax histories:
// the only state SimBackend keeps across steps besides the stochastic-rounding counter, whose
// draws' distribution does not depend on it), so that its probe model must run every step.
bool probe_is_stateful(const recipes::Recipe& recipe);
// Whether any operand of the recipe is rounded stochastically (recipes::plan's
// stochastic_rounding): its probe takes settings.draws draws per probe step.
bool probe_is_stochastic(const recipes::Recipe& recipe);

// The recipe with only `variant`'s GEMM quantized (kFpropOnly, kDgradOnly, kWgradOnly): the
// other two in high precision (override_linear_precision), GEMMs the recipe already keeps in
// high precision kept so.
recipes::Recipe single_gemm_variant(const recipes::Recipe& recipe, const std::string& variant);

// Where the probes' models run.
struct ProbeModels {
  const Workload* workload = nullptr;
  std::uint64_t seed = 0;
  HighPrecision high_precision = HighPrecision::fp32;
  BackendChoice backend;  // each probe model gets its own (no shadow check: not the run's)
  torch::Device device = torch::kCPU;
};

class BaselineProbes {
 public:
  // `recipes`: the probed recipes, their labels (recipe_label) beside them.
  BaselineProbes(const ProbeModels& models, const recipes::ProbeSettings& settings,
                 const std::vector<recipes::Recipe>& recipes,
                 const std::vector<std::string>& labels, std::int64_t steps_planned);
  ~BaselineProbes();
  void after_backward(const StepAfterBackward& step);
  const std::vector<ProbeRow>& rows() const { return rows_; }

 private:
  struct Probe;
  recipes::ProbeSettings settings_;
  std::vector<std::int64_t> steps_, attribution_steps_;
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<ProbeRow> rows_;
};

class ExactOnRunProbes {
 public:
  ExactOnRunProbes(const ProbeModels& models, const recipes::ProbeSettings& settings,
                   std::string run_label, std::int64_t steps_planned);
  ~ExactOnRunProbes();
  void after_backward(const StepAfterBackward& step);
  const std::vector<ProbeRow>& rows() const { return rows_; }

 private:
  std::string label_;
  std::vector<std::int64_t> steps_;
  std::shared_ptr<TrainableModel> model_;
  bool autocast_during_eval_ = false;
  std::vector<ProbeRow> rows_;
};

// The whole-model gradient-to-noise ratio of one step of an FP8 run, ||g|| / ||g_q - g|| (the
// exact_on_run whole_model row's chmiel_ratio, probe_sidecar.hpp): g_q the run's gradient of
// every trained parameter before clipping, g the baseline's high-precision model's at the run's
// weights on the step's batch, as ExactOnRunProbes recomputes it (a precision schedule's
// grad_noise_below signal, schedule_run.hpp). Changes nothing of the run, as the probes.
class ExactStepRatio {
 public:
  explicit ExactStepRatio(const ProbeModels& models);
  ~ExactStepRatio();
  double ratio(const StepAfterBackward& step) const;

 private:
  std::shared_ptr<TrainableModel> model_;
  bool autocast_during_eval_ = false;
};

}  // namespace fp8lab::experiments
