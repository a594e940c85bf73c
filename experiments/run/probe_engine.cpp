#include "experiments/run/probe_engine.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/rht_operands.hpp"
#include "experiments/run/global_rng_guard.hpp"
#include "experiments/run/probe_metrics.hpp"
#include "experiments/run/run_hooks.hpp"
#include "recipes/lowering.hpp"
#include "recipes/role_rules.hpp"

namespace fp8lab::experiments {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ProbeModel {
  std::string variant;
  std::int64_t draws = 1;  // settings.draws for a stochastic recipe, else 1
  std::shared_ptr<const LinearBackend> backend;
  std::shared_ptr<TrainableModel> model;
  bool autocast_during_eval = false;
};

ProbeModel make_probe_model(const ProbeModels& where, const ModelHooks& hooks,
                            std::shared_ptr<const LinearBackend> backend, std::string variant) {
  auto model = where.workload->make_model(where.seed);
  hooks.convert(*model);
  if (!hooks.device.is_cpu()) model->to(hooks.device);
  model->train();
  return {std::move(variant), 1, std::move(backend), std::move(model),
          hooks.use_autocast_during_eval};
}

// The probes' own backend (no shadow check), its random draws (stochastic rounding, mx_rht's
// signs) keyed by the run's seed as the run's own backend's are, so that two seeds' probes draw
// different streams.
std::shared_ptr<const LinearBackend> probe_backend(const ProbeModels& where) {
  return make_backend({where.backend.name, 0, where.backend.threads, where.seed});
}

// `draws`: the draws per probe step of a stochastic recipe.
ProbeModel make_recipe_model(const ProbeModels& where, const recipes::Recipe& recipe,
                             std::string variant, std::int64_t draws) {
  auto backend = probe_backend(where);
  auto probe = make_probe_model(where,
                                fp8_hooks(recipe, where.high_precision, backend, where.device),
                                backend, std::move(variant));
  // A variant whose quantized GEMM rounds nothing stochastically (NVFP4's fprop) draws once.
  probe.draws = probe_is_stochastic(recipe) ? std::max<std::int64_t>(1, draws) : 1;
  return probe;
}

// The named parameters of `model` in `names` order (throws naming a missing one).
std::vector<torch::Tensor> parameters_named(TrainableModel& model,
                                            const std::vector<std::string>& names) {
  const auto parameters = model.named_parameters();
  std::vector<torch::Tensor> out;
  for (const auto& name : names) {
    const auto* p = parameters.find(name);
    if (p == nullptr) {
      throw std::runtime_error("probe model has no parameter '" + name + "' that the run has");
    }
    out.push_back(*p);
  }
  return out;
}

torch::Tensor flat_double(const torch::Tensor& t) {
  return t.detach().reshape({-1}).to(torch::kCPU, torch::kDouble);
}

// Each parameter's gradient, flat float64 (a missing one counts as zero, as ModelSnapshot).
std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : parameters) {
    grads.push_back(p.grad().defined() ? flat_double(p.grad())
                                       : torch::zeros({p.numel()}, torch::kDouble));
  }
  return grads;
}

// `to`'s parameters set to `from`'s, by name (every parameter, frozen ones too).
void copy_weights(TrainableModel& to, TrainableModel& from) {
  torch::NoGradGuard no_grad;
  const auto source = from.named_parameters();
  for (auto& item : to.named_parameters()) {
    const auto* p = source.find(item.key());
    if (p == nullptr) {
      throw std::runtime_error("the run's model has no parameter '" + item.key() +
                               "' that its probe model has");
    }
    item.value().copy_(*p);
  }
}

// `to`'s delayed-scaling states set to `from`'s, Linear by Linear (LinearBackend::copy_state).
void copy_scaling_state(const ProbeModel& from, const ProbeModel& to) {
  const auto source = from.model->named_modules("", /*include_self=*/false);
  for (const auto& item : to.model->named_modules("", /*include_self=*/false)) {
    auto* target = dynamic_cast<Fp8LinearImpl*>(item.value().get());
    if (target == nullptr) continue;
    const auto* module = source.find(item.key());
    auto* linear = module ? dynamic_cast<Fp8LinearImpl*>(module->get()) : nullptr;
    if (linear == nullptr) {
      throw std::logic_error("probe variant's FP8 Linear " + item.key() +
                             " has no FP8 Linear of the probed recipe to copy its state from");
    }
    from.backend->copy_state(linear->scaling_state(), target->scaling_state());
  }
}

struct ProbeGradient {
  double loss = 0.0;
  std::vector<torch::Tensor> grads;
};

// One forward (FP8 autocast, training mode) and backward of `probe` at the run's weights on the
// step's batch.
ProbeGradient run_probe(const ProbeModel& probe, const StepAfterBackward& step) {
  copy_weights(*probe.model, step.model);
  for (auto& p : probe.model->parameters()) p.mutable_grad() = torch::Tensor();
  auto loss = forward_loss(*probe.model, step.batch, probe.autocast_during_eval);
  ProbeGradient out;
  out.loss = loss.item<double>();
  loss.backward();
  const auto parameters = parameters_named(*probe.model, step.parameter_names);
  out.grads = gradients_of(parameters);
  for (auto& p : probe.model->parameters()) p.mutable_grad() = torch::Tensor();
  return out;
}

torch::Tensor whole(const std::vector<torch::Tensor>& tensors) { return torch::cat(tensors); }

// The reference a probe step compares with: g and the update it gives, per tensor and whole.
struct Reference {
  const std::vector<std::string>* names = nullptr;
  std::vector<torch::Tensor> grads, weights, updates;
  torch::Tensor all_grads, all_updates;
  std::vector<AdamWMoments> moments;
  AdamWStep adamw;
};

Reference make_reference(const StepAfterBackward& step, std::vector<torch::Tensor> grads,
                         const std::vector<torch::Tensor>& weights) {
  Reference r;
  r.names = &step.parameter_names;
  r.grads = std::move(grads);
  for (const auto& w : weights) r.weights.push_back(flat_double(w));
  r.adamw = adamw_step(step.optimizer, step.grad_clip);
  r.moments = adamw_moments(step.optimizer, weights);
  r.updates = adamw_updates(r.grads, r.weights, r.moments, r.adamw);
  r.all_grads = whole(r.grads);
  r.all_updates = whole(r.updates);
  return r;
}

// The rows of one gradient against the reference: one per tensor and the whole model's.
// `head` holds the step, direction, recipe, variant, draw and losses.
void add_rows(std::vector<ProbeRow>& rows, const ProbeRow& head,
              const std::vector<torch::Tensor>& g_q, const Reference& ref) {
  const auto updates = adamw_updates(g_q, ref.weights, ref.moments, ref.adamw);
  for (std::size_t i = 0; i < g_q.size(); ++i) {
    ProbeRow row = head;
    row.tensor = (*ref.names)[i];
    set_gradient_metrics(row, g_q[i], ref.grads[i]);
    set_update_metrics(row, updates[i], ref.updates[i]);
    rows.push_back(std::move(row));
  }
  ProbeRow row = head;
  row.tensor = kWholeModel;
  set_gradient_metrics(row, whole(g_q), ref.all_grads);
  set_update_metrics(row, whole(updates), ref.all_updates);
  rows.push_back(std::move(row));
}

ProbeRow row_head(const StepAfterBackward& step, const char* direction, const std::string& recipe,
                  const std::string& variant, std::int64_t draw, double loss,
                  double reference_loss) {
  ProbeRow head = probe_row(step.step, direction, recipe, variant, draw);
  head.loss = loss;
  head.reference_loss = reference_loss;
  head.draw_spread = kNaN;
  return head;
}

// The RHT measurement of each FP8 Linear of `probe` whose wgrad GEMM runs NVFP4
// (rht_operands.hpp), by the Linear's name in the model.
using RhtProbes = std::vector<std::pair<std::string, std::shared_ptr<RhtOperandProbe>>>;
RhtProbes attach_rht_probes(const ProbeModel& probe) {
  namespace sc = sim::scaling;
  RhtProbes out;
  for (const auto& item : probe.model->named_modules("", /*include_self=*/false)) {
    auto* linear = dynamic_cast<Fp8LinearImpl*>(item.value().get());
    if (linear == nullptr || !linear->runs_fp8(sc::Gemm::kWgrad)) continue;
    const auto input = recipes::plan(linear->recipe(), sc::Operand::kInput, sc::Gemm::kWgrad);
    if (input.kind != sc::QuantizeKind::kNvfp4) continue;
    auto rht = std::make_shared<RhtOperandProbe>(
        input, recipes::plan(linear->recipe(), sc::Operand::kGradOutput, sc::Gemm::kWgrad));
    linear->set_rht_probe(rht);
    out.emplace_back(item.key(), std::move(rht));
  }
  return out;
}

void set_rht_active(const RhtProbes& probes, bool on) {
  for (const auto& item : probes) item.second->set_active(on);
}

void set_rht_columns(ProbeRow& row, const RhtOperandSums& input, const RhtOperandSums& grad) {
  row.wgrad_input_crest = input.mean_crest();
  row.wgrad_input_crest_rht = input.mean_crest_rht();
  row.wgrad_input_rel_error = input.rel_error();
  row.wgrad_input_rel_error_rht = input.rel_error_rht();
  row.wgrad_grad_crest = grad.mean_crest();
  row.wgrad_grad_crest_rht = grad.mean_crest_rht();
  row.wgrad_grad_rel_error = grad.rel_error();
  row.wgrad_grad_rel_error_rht = grad.rel_error_rht();
}

// The measurements since the last call into the rows of one gradient (rows[first...]): each
// Linear's on its weight's row, all pooled on the whole-model row.
void add_rht_columns(std::vector<ProbeRow>& rows, std::size_t first, const RhtProbes& probes) {
  RhtOperandSums all_input, all_grad;
  for (const auto& [layer, probe] : probes) {
    const auto input = probe->take(sim::scaling::Operand::kInput);
    const auto grad = probe->take(sim::scaling::Operand::kGradOutput);
    all_input.merge(input);
    all_grad.merge(grad);
    for (std::size_t i = first; i < rows.size(); ++i) {
      if (rows[i].tensor == layer + ".weight") set_rht_columns(rows[i], input, grad);
    }
  }
  for (std::size_t i = first; i < rows.size(); ++i) {
    if (rows[i].tensor == kWholeModel) set_rht_columns(rows[i], all_input, all_grad);
  }
}

bool contains(const std::vector<std::int64_t>& steps, std::int64_t step) {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

}  // namespace

std::vector<std::int64_t> probe_steps(std::int64_t steps, std::int64_t every) {
  std::vector<std::int64_t> out;
  if (every < 1 || steps < 1) return out;
  for (std::int64_t s = 0; s < steps; s += every) out.push_back(s);
  if (out.back() != steps - 1) out.push_back(steps - 1);
  return out;
}

bool probe_is_stateful(const recipes::Recipe& recipe) {
  return recipes::delayed_scaling(recipe).has_value();
}

bool probe_is_stochastic(const recipes::Recipe& recipe) {
  namespace sc = sim::scaling;
  // Each GEMM's two operands.
  const std::pair<sc::Operand, sc::Gemm> operands[] = {
      {sc::Operand::kInput, sc::Gemm::kFprop},      {sc::Operand::kWeight, sc::Gemm::kFprop},
      {sc::Operand::kGradOutput, sc::Gemm::kDgrad}, {sc::Operand::kWeight, sc::Gemm::kDgrad},
      {sc::Operand::kGradOutput, sc::Gemm::kWgrad}, {sc::Operand::kInput, sc::Gemm::kWgrad}};
  const auto& high = recipe.override_linear_precision;  // these GEMMs quantize nothing
  for (const auto& [tensor, role] : operands) {
    const bool quantized = role == sc::Gemm::kFprop   ? !high.fprop
                           : role == sc::Gemm::kDgrad ? !high.dgrad
                                                      : !high.wgrad;
    if (!quantized) continue;
    // Every recipe a Linear's role can get under per_role (the recipe alone without rules).
    for (const recipes::Recipe& r : recipes::role_recipes(recipe, recipes::role_of(tensor, role))) {
      recipes::Recipe unnamed = r;
      unnamed.per_role.clear();
      if (recipes::plan(unnamed, tensor, role).stochastic_rounding) return true;
    }
  }
  return false;
}

recipes::Recipe single_gemm_variant(const recipes::Recipe& recipe, const std::string& variant) {
  recipes::Recipe r = recipe;
  auto& hp = r.override_linear_precision;
  if (variant == kFpropOnly) {
    hp.dgrad = hp.wgrad = true;
  } else if (variant == kDgradOnly) {
    hp.fprop = hp.wgrad = true;
  } else if (variant == kWgradOnly) {
    hp.fprop = hp.dgrad = true;
  } else {
    throw std::invalid_argument("single_gemm_variant: not a single-GEMM variant: " + variant);
  }
  return r;
}

struct BaselineProbes::Probe {
  recipes::Recipe recipe;
  std::string label;
  bool stateful = false;
  ProbeModel main;
  RhtProbes rht;                     // main's Linears whose wgrad runs NVFP4
  std::vector<ProbeModel> variants;  // fprop_only, dgrad_only, wgrad_only (with attribution)
};

BaselineProbes::BaselineProbes(const ProbeModels& models, const recipes::ProbeSettings& settings,
                               const std::vector<recipes::Recipe>& recipes,
                               const std::vector<std::string>& labels, std::int64_t steps_planned)
    : settings_(settings), steps_(probe_steps(steps_planned, settings.every)) {
  using recipes::ProbeAttribution;
  if (settings.attribution == ProbeAttribution::all) attribution_steps_ = steps_;
  if (settings.attribution == ProbeAttribution::first_middle_last && !steps_.empty()) {
    attribution_steps_ = {steps_.front(), steps_[(steps_.size() - 1) / 2], steps_.back()};
  }
  GlobalRngGuard rng;
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    auto probe = std::make_unique<Probe>();
    probe->recipe = recipes[i];
    probe->label = labels.at(i);
    probe->stateful = probe_is_stateful(recipes[i]);
    probe->main = make_recipe_model(models, recipes[i], kAllGemms, settings.draws);
    probe->rht = attach_rht_probes(probe->main);
    if (!attribution_steps_.empty()) {
      for (const char* variant : {kFpropOnly, kDgradOnly, kWgradOnly}) {
        probe->variants.push_back(make_recipe_model(
            models, single_gemm_variant(recipes[i], variant), variant, settings.draws));
      }
    }
    probes_.push_back(std::move(probe));
  }
}

BaselineProbes::~BaselineProbes() = default;

void BaselineProbes::after_backward(const StepAfterBackward& step) {
  GlobalRngGuard rng;
  const bool probe_step = contains(steps_, step.step);
  if (!probe_step) {
    // A stateful recipe's history follows the trajectory: its model runs every step (the
    // gradient is dropped). Stateless recipes run at probe steps only.
    for (const auto& probe : probes_) {
      if (probe->stateful) run_probe(probe->main, step);
    }
    return;
  }
  const auto weights = parameters_named(step.model, step.parameter_names);
  const Reference ref = make_reference(step, gradients_of(weights), weights);
  const bool attribution = contains(attribution_steps_, step.step);
  for (const auto& probe : probes_) {
    std::vector<const ProbeModel*> models{&probe->main};
    if (attribution) {
      for (const auto& variant : probe->variants) {
        // Delayed scaling: each variant starts from the history the recipe has at this step
        // (copied before the recipe's own model runs it), rather than running every step too:
        // the same history at a third of the cost of three more passes per step.
        if (probe->stateful) copy_scaling_state(probe->main, variant);
        models.push_back(&variant);
      }
    }
    for (const ProbeModel* model : models) {
      // The draws differ because each run advances the stochastic-rounding stream of every
      // Linear of the model (SimBackend: one Philox stream per quantization call, under the
      // run's seed).
      std::vector<ProbeGradient> draws;
      for (std::int64_t d = 0; d < model->draws; ++d) {
        // The RHT measurement: on the recipe's own model, its first draw.
        const bool rht = model == &probe->main && d == 0 && !probe->rht.empty();
        if (rht) set_rht_active(probe->rht, true);
        draws.push_back(run_probe(*model, step));
        if (rht) set_rht_active(probe->rht, false);
        const std::size_t first = rows_.size();
        add_rows(rows_,
                 row_head(step, kOnBaseline, probe->label, model->variant, d, draws.back().loss,
                          step.loss),
                 draws.back().grads, ref);
        if (rht) add_rht_columns(rows_, first, probe->rht);
      }
      if (draws.size() < 2) continue;
      // The mean gradient over the draws and the draws' spread around it.
      std::vector<torch::Tensor> mean(draws.front().grads.size());
      double loss = 0.0;
      for (std::size_t i = 0; i < mean.size(); ++i) {
        mean[i] = torch::zeros_like(draws.front().grads[i]);
        for (const auto& draw : draws) mean[i] += draw.grads[i];
        mean[i] /= static_cast<double>(draws.size());
      }
      for (const auto& draw : draws) loss += draw.loss / static_cast<double>(draws.size());
      const std::size_t first = rows_.size();
      add_rows(
          rows_,
          row_head(step, kOnBaseline, probe->label, model->variant, kMeanOfDraws, loss, step.loss),
          mean, ref);
      for (std::size_t i = 0; i <= mean.size(); ++i) {
        const bool whole_model = i == mean.size();
        const auto mean_i = whole_model ? whole(mean) : mean[i];
        const double g_norm = whole_model ? ref.all_grads.norm().item<double>()
                                          : ref.grads[i].norm().item<double>();
        double squares = 0.0;
        for (const auto& draw : draws) {
          const auto g_k = whole_model ? whole(draw.grads) : draw.grads[i];
          squares += (g_k - mean_i).pow(2).sum().item<double>();
        }
        rows_[first + i].draw_spread =
            g_norm == 0.0 ? kNaN : std::sqrt(squares / static_cast<double>(draws.size())) / g_norm;
      }
    }
  }
}

namespace {
// The exact model an FP8 run's own steps are recomputed with (the baseline's hooks on the run's
// backend kind, every GEMM high): built with the global RNG saved and restored, so that building
// it changes no training bit.
ProbeModel exact_run_model(const ProbeModels& models) {
  GlobalRngGuard rng;
  const auto backend = probe_backend(models);
  return make_probe_model(models, baseline_hooks(models.high_precision, backend, models.device),
                          backend, kAllGemms);
}
}  // namespace

ExactOnRunProbes::ExactOnRunProbes(const ProbeModels& models,
                                   const recipes::ProbeSettings& settings, std::string run_label,
                                   std::int64_t steps_planned)
    : label_(std::move(run_label)), steps_(probe_steps(steps_planned, settings.every)) {
  const auto exact = exact_run_model(models);
  model_ = exact.model;
  autocast_during_eval_ = exact.autocast_during_eval;
}

ExactOnRunProbes::~ExactOnRunProbes() = default;

ExactStepRatio::ExactStepRatio(const ProbeModels& models) {
  const auto exact = exact_run_model(models);
  model_ = exact.model;
  autocast_during_eval_ = exact.autocast_during_eval;
}

ExactStepRatio::~ExactStepRatio() = default;

double ExactStepRatio::ratio(const StepAfterBackward& step) const {
  GlobalRngGuard rng;
  const auto weights = parameters_named(step.model, step.parameter_names);
  const auto run_grads = gradients_of(weights);
  const ProbeModel exact{kAllGemms, 1, nullptr, model_, autocast_during_eval_};
  const ProbeGradient g = run_probe(exact, step);
  // The numbers of the whole_model row that ExactOnRunProbes adds (add_rows), g_q against g.
  ProbeRow row;
  set_gradient_metrics(row, whole(run_grads), whole(g.grads));
  return row.chmiel_ratio;
}

void ExactOnRunProbes::after_backward(const StepAfterBackward& step) {
  if (!contains(steps_, step.step)) return;
  GlobalRngGuard rng;
  const auto weights = parameters_named(step.model, step.parameter_names);
  const auto run_grads = gradients_of(weights);
  const ProbeModel exact{kAllGemms, 1, nullptr, model_, autocast_during_eval_};
  const ProbeGradient g = run_probe(exact, step);
  // g is the exact gradient (the reference, with its update), g_q the run's own.
  const Reference ref = make_reference(step, g.grads, weights);
  add_rows(rows_, row_head(step, kExactOnRun, label_, kAllGemms, 0, step.loss, g.loss), run_grads,
           ref);
}

}  // namespace fp8lab::experiments
