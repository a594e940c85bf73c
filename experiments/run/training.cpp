#include "experiments/run/training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include <torch/cuda.h>

#include "experiments/linear/autocast.hpp"
#include "experiments/results/eval_tail.hpp"
#include "experiments/workloads/learning_rate.hpp"

namespace fp8lab::experiments {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The trained parameters: a frozen one (residual-mlp's teacher inside the model, a frozen
// LayerNorm bias) is the same in every run and would only dilute the relative L2 distances.
std::vector<std::string> sorted_parameter_names(TrainableModel& model) {
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters()) {
    if (item.value().requires_grad()) names.push_back(item.key());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Flat weights and gradients in the order of `names`; a missing gradient counts as zero.
ModelSnapshot snapshot(TrainableModel& model, const std::vector<std::string>& names,
                       std::int64_t step) {
  torch::NoGradGuard no_grad;
  const auto parameters = model.named_parameters();
  std::vector<torch::Tensor> weights, gradients;
  for (const auto& name : names) {
    const auto* p = parameters.find(name);
    if (p == nullptr) {
      throw std::runtime_error("model has no parameter '" + name +
                               "' that the baseline has: convert_model renamed a parameter");
    }
    weights.push_back(p->detach().reshape({-1}).to(torch::kFloat).cpu());
    const auto& grad = p->grad();
    gradients.push_back(grad.defined() ? grad.detach().reshape({-1}).to(torch::kFloat).cpu()
                                       : torch::zeros({p->numel()}));
  }
  return ModelSnapshot{step, torch::cat(weights), torch::cat(gradients)};
}

// The model on its hooks' device (after convert, so that converted Linears move too).
void place(TrainableModel& model, const ModelHooks& hooks) {
  if (!hooks.device.is_cpu()) model.to(hooks.device);
}
Batch on_device(Batch batch, torch::Device device) {
  if (device.is_cpu()) return batch;
  return Batch{batch.input.to(device), batch.target.to(device)};
}

// The eval loss (mean of the eval batches' losses, as always) and its standard error: the spread
// of the examples' losses (TrainableModel::example_losses: a window of text, a sample) over the
// square root of their number, or of the batches' losses when the model gives no example losses.
struct EvalLoss {
  double loss = 0.0;
  double standard_error = NAN;
  std::vector<double> example_losses;  // empty when the model gives none
  std::int64_t examples = 0;           // what standard_error is over: examples, else batches
};

EvalLoss evaluate(TrainableModel& model, const std::vector<Batch>& batches,
                  bool autocast_during_eval) {
  model.eval();
  torch::NoGradGuard no_grad;
  double sum = 0.0;
  std::vector<double> batch_losses, example_losses;
  for (const auto& batch : batches) {
    ContextualFp8Autocast fp8(model, autocast_during_eval);
    const auto examples = model.example_losses(batch);
    // One forward per batch: the batch loss is the examples' mean when the model gives them
    // (equal example sizes), else loss().
    const double loss = examples.defined() ? examples.to(torch::kDouble).mean().item<double>()
                                           : model.loss(batch).item<double>();
    if (examples.defined()) {
      const auto values = examples.to(torch::kDouble).cpu().contiguous();
      example_losses.insert(example_losses.end(), values.data_ptr<double>(),
                            values.data_ptr<double>() + values.numel());
    }
    batch_losses.push_back(loss);
    sum += loss;
  }
  model.train();
  if (batches.empty()) return {};
  const auto& spread = example_losses.empty() ? batch_losses : example_losses;
  const double se = standard_error(spread);
  const auto examples = static_cast<std::int64_t>(spread.size());
  return {sum / static_cast<double>(batches.size()), se, std::move(example_losses), examples};
}

// The evals no verdict reads (results/eval_tail.hpp) draw learning curves; they use every
// stride-th eval batch from the first: a fixed sample, spread over the whole eval set, the same in
// every run of the workload, so that a run's early points stay paired with its baseline's.
std::vector<Batch> early_eval_sample(const std::vector<Batch>& batches, std::int64_t stride) {
  std::vector<Batch> sample;
  for (std::size_t i = 0; i < batches.size(); i += static_cast<std::size_t>(stride)) {
    sample.push_back(batches[i]);
  }
  return sample;
}

torch::optim::AdamWOptions adamw_options(const TrainingSchedule& s) {
  return torch::optim::AdamWOptions(s.learning_rate)
      .betas({s.beta1, s.beta2})
      .weight_decay(s.weight_decay);
}

torch::optim::AdamW make_optimizer(TrainableModel& model, const TrainingSchedule& s) {
  return torch::optim::AdamW(model.parameters(), adamw_options(s));
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  }
}

// `fp8lab run` alone prints nothing for minutes or hours otherwise: a line on stderr at most every
// 10 s, as the sweep's progress line ("step 1200/100000000 (0.0%), 2100 steps/s, ETA 13h13m").
// Off when the caller watches the steps itself (TrainingOptions::on_step).
class TrainingProgress {
 public:
  TrainingProgress(std::int64_t total, bool enabled)
      : total_(total), enabled_(enabled), start_(Clock::now()), last_(start_) {}
  void step_done(std::int64_t done) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(10)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = static_cast<double>(done) / std::max(elapsed, 1e-9);
    const auto left = static_cast<long long>(static_cast<double>(total_ - done) / rate);
    std::fprintf(stderr,
                 "training: step %lld/%lld (%.1f%%), %.0f steps/s, ETA %lldh%02lldm%02llds\n",
                 static_cast<long long>(done), static_cast<long long>(total_),
                 100.0 * static_cast<double>(done) / static_cast<double>(total_), rate, left / 3600,
                 left / 60 % 60, left % 60);
    std::fflush(stderr);
  }

 private:
  std::int64_t total_;
  bool enabled_;
  Clock::time_point start_, last_;
};

}  // namespace

torch::Tensor forward_loss(TrainableModel& model, const Batch& batch, bool autocast_during_eval) {
  ContextualFp8Autocast fp8(model, autocast_during_eval);  // autocast.hpp
  return model.loss(batch);
}

double standard_error(const std::vector<double>& values) {
  if (values.size() < 2) return NAN;
  double mean = 0.0;
  for (const double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0.0;
  for (const double v : values) squares += (v - mean) * (v - mean);
  const double n = static_cast<double>(values.size());
  return std::sqrt(squares / (n - 1.0) / n);
}

double relative_l2(const torch::Tensor& a, const torch::Tensor& b) {
  const double denominator = b.to(torch::kDouble).norm().item<double>();
  const double numerator = (a.to(torch::kDouble) - b.to(torch::kDouble)).norm().item<double>();
  if (denominator == 0.0) return numerator == 0.0 ? 0.0 : INFINITY;
  return numerator / denominator;
}

bool step_ends_run(TrainingResult& result, std::int64_t step, double loss, bool trips,
                   const recipes::InstabilityWatch* watch, bool stop_when_unstable) {
  if (!std::isfinite(loss)) {
    result.status = "diverged";
    result.diverged_at_step = step;
    result.divergence_reason = "training loss is " + std::to_string(loss);
    return true;
  }
  if (!trips) return false;
  result.status = "unstable";
  result.unstable_at_step = watch->streak_start();
  result.unstable_met_at_step = step;
  result.instability_reason = watch->reason();
  return stop_when_unstable;
}

TrainingResult train(const Workload& workload, const ModelHooks& hooks,
                     const TrainingOptions& options, const BaselineReference* reference) {
  const auto schedule = workload.schedule();
  TrainingResult result;
  result.steps_planned = options.steps.value_or(schedule.steps);
  result.tokens_per_step = schedule.tokens_per_batch;
  // Bounded logs (training.hpp: kMaxTrainRows, kMaxEvalPoints): a long run logs every
  // train_stride-th step and evaluates every eval_every-th step, evenly spaced, last step included.
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return a / b + (a % b != 0); };
  const auto planned = std::max<std::int64_t>(1, result.steps_planned);
  const auto train_stride = ceil_div(planned, kMaxTrainRows);
  const auto schedule_eval_every = std::max<std::int64_t>(1, schedule.eval_every);
  const auto eval_every = schedule_eval_every *
                          ceil_div(ceil_div(planned, schedule_eval_every), kMaxEvalPoints);
  const auto statistics_every = options.statistics_every > 0 ? options.statistics_every
                                                             : eval_every;
  TrainingProgress progress(result.steps_planned, !options.on_step);

  auto model = workload.make_model(options.seed);
  if (hooks.convert) hooks.convert(*model);
  place(*model, hooks);
  model->train();
  result.parameter_names = sorted_parameter_names(*model);
  // Today's torch::optim::AdamW, or the recipe's stored precision (quantized_adamw.hpp).
  const auto optimizer_owner = make_adamw(model->parameters(), adamw_options(schedule),
                                          options.optimizer_precision, options.seed);
  auto& optimizer = *optimizer_owner;
  const auto* quantized = dynamic_cast<const QuantizedAdamW*>(optimizer_owner.get());
  // The parameters' names in the order the optimizer has them (named_parameters walks the
  // modules as parameters() does).
  std::vector<std::string> optimizer_parameter_names;
  if (quantized != nullptr) {
    for (const auto& item : model->named_parameters())
      optimizer_parameter_names.push_back(item.key());
  }
  std::vector<Batch> eval_batches;
  for (auto& batch : workload.eval_batches()) {
    eval_batches.push_back(on_device(std::move(batch), hooks.device));
  }
  // Only the evals a verdict reads use the whole eval set (results/eval_tail.hpp: the first and
  // the tail's, of the run's planned eval points); with FP8 during eval every eval is whole, as
  // its passes' amaxes feed the next step's scales (a sample would change the trajectory).
  const auto eval_points = static_cast<std::size_t>(ceil_div(planned, eval_every) +
                                                    ((planned - 1) % eval_every != 0 ? 1 : 0));
  const auto early_eval_batches =
      hooks.use_autocast_during_eval
          ? eval_batches
          : early_eval_sample(eval_batches, std::max<std::int64_t>(1, schedule.early_eval_stride));

  std::map<std::int64_t, const ModelSnapshot*> reference_snapshots;
  if (reference != nullptr) {
    for (const auto& s : reference->snapshots) reference_snapshots[s.step] = &s;
  }
  if (hooks.take_step_measurements) hooks.take_step_measurements(*model, false);  // reset
  std::vector<double> step_seconds;
  std::optional<recipes::InstabilityWatch> watch;
  if (options.instability) watch.emplace(*options.instability);
  const auto wants_record_rows = [&](std::int64_t step) {
    return step % statistics_every == 0 || step + 1 == result.steps_planned;
  };
  const auto layer_stats_every =
      options.layer_stats_every > 0
          ? options.layer_stats_every *
                ceil_div(ceil_div(planned, options.layer_stats_every), kMaxTrainRows)
          : 0;
  const auto wants_sidecar_rows = [&](std::int64_t step) {
    if (layer_stats_every == 0) return wants_record_rows(step);
    return step % layer_stats_every == 0 || step + 1 == result.steps_planned;
  };
  const auto wants_rows = [&](std::int64_t step) {
    return wants_record_rows(step) || wants_sidecar_rows(step);
  };

  for (std::int64_t step = 0; step < result.steps_planned; ++step) {
    const auto batch = on_device(workload.train_batch(step, options.seed), hooks.device);
    if (hooks.measure_operands) hooks.measure_operands(*model, wants_rows(step));
    if (hooks.before_step) hooks.before_step(*model, step);
    const auto start = Clock::now();
    set_learning_rate(optimizer,
                      learning_rate_at(schedule.learning_rate, schedule.warmup_steps,
                                       schedule.final_lr_fraction, step, result.steps_planned));
    optimizer.zero_grad();
    auto loss = forward_loss(*model, batch, hooks.use_autocast_during_eval);
    const double loss_value = loss.item<double>();
    const bool trips = std::isfinite(loss_value) && watch && !result.unstable_met_at_step &&
                       watch->observe(step, loss_value);
    const bool logged = step % train_stride == 0 || step + 1 == result.steps_planned;
    if (logged || trips || !std::isfinite(loss_value)) {
      result.train_steps.push_back(step);
      result.train_loss.push_back(loss_value);
    }
    if (step_ends_run(result, step, loss_value, trips, watch ? &*watch : nullptr,
                      options.stop_when_unstable)) {
      result.train_seconds += seconds_since(start);
      step_seconds.push_back(seconds_since(start));
      break;
    }
    loss.backward();
    // The probes' time is not the step's: taken out of its seconds (the record's throughput).
    double probe_seconds = 0.0;
    if (options.after_backward) {
      const auto probe_start = Clock::now();
      options.after_backward({step, result.steps_planned, *model, batch, loss_value, optimizer,
                              schedule.grad_clip, result.parameter_names});
      probe_seconds = seconds_since(probe_start);
    }
    if (schedule.grad_clip > 0.0) {
      torch::nn::utils::clip_grad_norm_(model->parameters(), schedule.grad_clip);
    }
    optimizer.step();
    if (quantized != nullptr && wants_record_rows(step)) {
      result.optimizer_state_rows.push_back(
          optimizer_state_row(step, quantized->last_step_errors()));
    }
    if (quantized != nullptr && wants_sidecar_rows(step)) {  // per parameter, in the sidecar
      for (auto& row : optimizer_state_sidecar_rows(step, optimizer_parameter_names, *quantized)) {
        result.layer_stats_rows.push_back(std::move(row));
      }
    }
    // The step's queued GPU work (as time_training_steps), not only its launches.
    if (hooks.device.is_cuda()) torch::cuda::synchronize();
    const double seconds = seconds_since(start) - probe_seconds;
    result.train_seconds += seconds;
    if (logged) step_seconds.push_back(seconds);  // the median over the logged steps
    result.steps_completed = step + 1;

    const bool last = step + 1 == result.steps_planned;
    if (hooks.after_step) hooks.after_step(*model, step);
    if (hooks.take_step_measurements) {
      auto measured = hooks.take_step_measurements(*model, wants_rows(step));
      result.gemm_seconds += measured.gemm_seconds;
      if (wants_record_rows(step)) {
        for (auto& row : measured.rows) {
          row.step = step;
          result.layer_statistics.push_back(std::move(row));
        }
      }
      if (wants_sidecar_rows(step)) {
        for (auto& row : measured.sidecar_rows) {
          row.step = step;
          result.layer_stats_rows.push_back(std::move(row));
        }
      }
    }
    if (step % eval_every == 0 || last) {
      // The eval's forward passes are no step's: measure nothing during them, and drop their GEMM
      // time and counts before the next step (else they would land in its measurement, outside
      // train_seconds: a GEMM share above 1, and eval inputs in its per-layer rows).
      if (hooks.measure_operands) hooks.measure_operands(*model, false);
      const bool whole = eval_enters_verdicts(result.eval.size(), eval_points);
      const auto measured = evaluate(*model, whole ? eval_batches : early_eval_batches,
                                     hooks.use_autocast_during_eval);
      if (hooks.take_step_measurements) hooks.take_step_measurements(*model, false);
      result.eval.emplace_back(step, measured.loss);
      result.eval_standard_error.push_back(measured.standard_error);
      result.eval_examples.push_back(measured.examples);
      // The last eval's, at the end; none when a run that stopped early last evaluated a sample.
      result.final_eval_example_losses = whole ? measured.example_losses : std::vector<double>{};
      const auto it = reference_snapshots.find(step);
      if (options.keep_snapshots || it != reference_snapshots.end()) {
        auto s = snapshot(
            *model, reference != nullptr ? reference->parameter_names : result.parameter_names,
            step);
        if (it != reference_snapshots.end()) {
          result.divergence.emplace_back(step, relative_l2(s.weights, it->second->weights),
                                         relative_l2(s.gradients, it->second->gradients));
        }
        if (options.keep_snapshots) result.snapshots.push_back(std::move(s));
      }
    }
    if (options.on_step) options.on_step(step + 1, result.steps_planned);
    progress.step_done(step + 1);
  }
  if (!step_seconds.empty()) {
    std::sort(step_seconds.begin(), step_seconds.end());
    result.median_step_seconds = step_seconds[step_seconds.size() / 2];
  }
  return result;
}

std::vector<double> time_training_steps(const Workload& workload,
                                        const std::vector<ModelHooks>& variants, std::uint64_t seed,
                                        int steps) {
  const auto schedule = workload.schedule();
  struct Variant {
    std::shared_ptr<TrainableModel> model;
    std::unique_ptr<torch::optim::AdamW> optimizer;
    std::vector<double> times;
  };
  std::vector<Variant> timed(variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    timed[v].model = workload.make_model(seed);
    if (variants[v].convert) variants[v].convert(*timed[v].model);
    place(*timed[v].model, variants[v]);
    // The probe reads no statistics rows.
    if (variants[v].measure_operands) variants[v].measure_operands(*timed[v].model, false);
    timed[v].model->train();
    timed[v].optimizer =
        std::make_unique<torch::optim::AdamW>(make_optimizer(*timed[v].model, schedule));
  }
  // Step i of every variant before step i + 1 of any: a change of machine load during the
  // measurement falls on all variants alike.
  for (int step = 0; step <= steps; ++step) {
    const auto batch = workload.train_batch(step, seed);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      auto& t = timed[v];
      const auto device_batch = on_device(batch, variants[v].device);
      const auto start = Clock::now();
      t.optimizer->zero_grad();
      auto loss = forward_loss(*t.model, device_batch, variants[v].use_autocast_during_eval);
      loss.backward();
      if (schedule.grad_clip > 0.0) {
        torch::nn::utils::clip_grad_norm_(t.model->parameters(), schedule.grad_clip);
      }
      t.optimizer->step();
      if (variants[v].device.is_cuda()) torch::cuda::synchronize();  // the step's queued work
      const double seconds = seconds_since(start);
      if (variants[v].take_step_measurements) variants[v].take_step_measurements(*t.model, false);
      if (step > 0) t.times.push_back(seconds);  // step 0 warms caches up
    }
  }
  std::vector<double> medians;
  for (auto& t : timed) {
    std::sort(t.times.begin(), t.times.end());
    medians.push_back(t.times.empty() ? 0.0 : t.times[t.times.size() / 2]);
  }
  return medians;
}

}  // namespace fp8lab::experiments
