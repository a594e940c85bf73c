#include "experiments/run/schedule_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "experiments/linear/beyond_gemm.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/run/run_executor.hpp"
#include "recipes/lowering.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/schedule.hpp"

namespace fp8lab::experiments {
namespace {

nlohmann::json fp8_gemms_of(torch::nn::Module& model) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    const auto* linear = dynamic_cast<const Fp8LinearImpl*>(item.value().get());
    if (linear == nullptr) continue;
    auto gemms = nlohmann::json::array();
    for (const Gemm g : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
      if (linear->runs_fp8(g)) gemms.push_back(std::string(name(g)));
    }
    out[item.key()] = std::move(gemms);
  }
  return out;
}

std::string label_of(const recipes::Recipe* recipe) {
  return recipe ? recipe_label(*recipe) : std::string(recipes::kHighPrecisionStage);
}

}  // namespace

nlohmann::json stage_plans(const recipes::Recipe* recipe) {
  nlohmann::json out = nlohmann::json::object();
  for (const Gemm g : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
    const auto operands = sim::scaling::gemm_operands(g);
    for (const Operand o : {operands.a, operands.b}) {
      out[std::string(name(g))][std::string(name(o))] =
          recipe && recipes::gemm_runs_fp8(*recipe, g)
              ? recipes::plan_text(recipes::plan(*recipe, o, g))
              : std::string("high_precision");
    }
  }
  return out;
}

ScheduleRun::ScheduleRun(const recipes::Recipe& recipe, std::int64_t steps_planned)
    : label_(recipes::schedule_label(recipe)),
      stages_(recipes::schedule_stages(recipe)),
      steps_planned_(steps_planned),
      measurements_(stages_.size(), nlohmann::json::array()) {
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    if (i > 0 && stages_[i].start.on_signal) {
      starts_.push_back(-1);  // known when the signal crosses
      continue;
    }
    const std::int64_t start = i == 0 ? 0
                                      : recipes::stage_start_step(stages_[i].start, steps_planned);
    if (i > 0 && (start <= starts_.back() || start >= steps_planned)) {
      throw std::invalid_argument(fmt::format(
          "schedule: stage {} would start at step {} (until {}) of a run of {} steps; accepted: "
          "stages that start after the one before and before the last step",
          i, start, recipes::start_text(stages_[i].start), steps_planned));
    }
    starts_.push_back(start);
  }
}

const recipes::ScheduleStart* ScheduleRun::pending_signal_start() const {
  if (current_ + 1 < stages_.size() && stages_[current_ + 1].start.on_signal &&
      starts_[current_ + 1] < 0) {
    return &stages_[current_ + 1].start;
  }
  return nullptr;
}

bool ScheduleRun::watching_underflow() const {
  const auto* start = pending_signal_start();
  return start != nullptr && start->underflow_above > 0;
}

bool ScheduleRun::watching_grad_noise() const {
  const auto* start = pending_signal_start();
  return start != nullptr && start->grad_noise_below > 0;
}

void ScheduleRun::observe_signal(const StepMeasurements& measured, std::int64_t step) {
  std::int64_t underflowed = 0, count = 0;
  for (const auto& row : measured.rows) {
    underflowed += row.underflowed.value_or(0);
    count += row.count.value_or(0);
  }
  if (count == 0) return;
  const double fraction = static_cast<double>(underflowed) / static_cast<double>(count);
  const double above = stages_[current_ + 1].start.underflow_above;
  if (!(fraction > above) || step + 1 >= steps_planned_) return;
  starts_[current_ + 1] = step + 1;
  pending_signal_ = {{"underflow_fraction", fraction},
                     {"above", above},
                     {"measured_at_step", step}};
}

void ScheduleRun::observe_grad_noise(const StepAfterBackward& step) {
  if (!watching_grad_noise()) return;
  const auto& start = stages_[current_ + 1].start;
  // The stage's first step and every `every`-th after it.
  if ((step.step - starts_[current_]) % start.every != 0) return;
  const double ratio = exact_->ratio(step);
  // An error of exactly 0 gives an infinite ratio: JSON's null.
  const auto value = std::isfinite(ratio) ? nlohmann::json(ratio) : nlohmann::json(nullptr);
  measurements_[current_].push_back({{"step", step.step}, {"grad_noise_ratio", value}});
  // A measurement at or above the threshold (or NaN) starts the count again.
  below_in_a_row_ = ratio < start.grad_noise_below ? below_in_a_row_ + 1 : 0;
  if (below_in_a_row_ < start.consecutive || step.step + 1 >= steps_planned_) return;
  starts_[current_ + 1] = step.step + 1;
  below_in_a_row_ = 0;  // the next signal stage counts its own measurements
  pending_signal_ = {{"grad_noise_ratio", ratio},
                     {"below", start.grad_noise_below},
                     {"every", start.every},
                     {"measured_at_step", step.step}};
  if (recipes::names_consecutive(start)) pending_signal_["consecutive"] = start.consecutive;
}

void ScheduleRun::wrap(TrainingOptions& options, const ProbeModels& models) {
  const bool has_grad_noise = std::any_of(stages_.begin(), stages_.end(), [](const auto& s) {
    return s.start.on_signal && s.start.grad_noise_below > 0;
  });
  if (!has_grad_noise) return;
  exact_ = std::make_shared<const ExactStepRatio>(models);
  auto inner = std::move(options.after_backward);
  options.after_backward = [this, inner](const StepAfterBackward& step) {
    if (inner) inner(step);
    observe_grad_noise(step);
  };
}

void ScheduleRun::wrap(ModelHooks& hooks) {
  auto inner = std::move(hooks.before_step);
  hooks.before_step = [this, inner](TrainableModel& model, std::int64_t step) {
    if (fp8_gemms_.empty()) fp8_gemms_.push_back(fp8_gemms_of(model));  // stage 0, as converted
    for (std::size_t i = 1; i < starts_.size(); ++i) {
      if (starts_[i] == step) switch_to(model, i, step);
    }
    if (inner) inner(model, step);
  };
  const bool has_underflow = std::any_of(stages_.begin(), stages_.end(), [](const auto& s) {
    return s.start.on_signal && s.start.underflow_above > 0;
  });
  if (!has_underflow) return;
  auto measure = std::move(hooks.measure_operands);
  hooks.measure_operands = [this, measure](TrainableModel& model, bool on) {
    if (measure) measure(model, on || watching_underflow());
  };
  auto after = std::move(hooks.after_step);
  hooks.after_step = [this, after](TrainableModel& model, std::int64_t step) {
    measured_step_ = step;  // the next take_step_measurements reads this step's
    if (after) after(model, step);
  };
  auto take = std::move(hooks.take_step_measurements);
  if (!take) {
    throw std::logic_error("schedule: until_signal needs the run's operand measurements");
  }
  hooks.take_step_measurements = [this, take](TrainableModel& model, bool want_rows) {
    const std::int64_t step = std::exchange(measured_step_, -1);
    if (step < 0 || !watching_underflow()) return take(model, want_rows);
    auto measured = take(model, true);
    observe_signal(measured, step);
    if (!want_rows) {  // measured for the signal only: the step's rows are not logged
      measured.rows.clear();
      measured.sidecar_rows.clear();
    }
    return measured;
  };
}

void ScheduleRun::switch_to(TrainableModel& model, std::size_t stage, std::int64_t step) {
  current_ = stage;
  const recipes::Recipe* recipe = stages_[stage].recipe.get();
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    if (auto* linear = dynamic_cast<Fp8LinearImpl*>(item.value().get())) linear->set_recipe(recipe);
  }
  apply_beyond_gemm_plans(model, recipe ? *recipe : recipes::Recipe{});
  fp8_gemms_.push_back(fp8_gemms_of(model));
  nlohmann::json event{{"step", step},
                       {"stage", static_cast<std::int64_t>(stage)},
                       {"recipe_label", label_of(recipe)}};
  event["recipe_canonical"] = recipe ? nlohmann::json(recipes::canonical_string(*recipe))
                                     : nlohmann::json(nullptr);
  if (stages_[stage].start.on_signal) event["signal"] = std::exchange(pending_signal_, nullptr);
  switches_.push_back(std::move(event));
  // In the run's log: where a killed run had got to.
  std::fprintf(stderr, "schedule: step %lld: stage %zu (%s)\n", static_cast<long long>(step), stage,
               label_of(recipe).c_str());
  std::fflush(stderr);
}

void ScheduleRun::add_to_record(nlohmann::json& record) const {
  auto stages = nlohmann::json::array();
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    const recipes::Recipe* recipe = stages_[i].recipe.get();
    // A signal stage that was not reached: from_step null; the stage before it ran to the end.
    const auto step_or_null = [](std::int64_t v) {
      return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
    };
    const std::int64_t until = i + 1 < starts_.size() && starts_[i + 1] >= 0 ? starts_[i + 1]
                                                                             : steps_planned_;
    nlohmann::json s{
        {"stage", static_cast<std::int64_t>(i)},
        {"from_step", step_or_null(starts_[i])},
        {"until_step", starts_[i] < 0 ? nlohmann::json(nullptr) : nlohmann::json(until)},
        {"recipe_label", label_of(recipe)},
        {"plans", stage_plans(recipe)}};
    s["until"] = i == 0 ? nlohmann::json(nullptr)
                        : nlohmann::json(recipes::start_text(stages_[i].start));
    s["recipe_canonical"] = recipe ? nlohmann::json(recipes::canonical_string(*recipe))
                                   : nlohmann::json(nullptr);
    // The Linears' FP8 GEMMs as the run had them at the stage's first step (null: not reached).
    s["fp8_gemms"] = i < fp8_gemms_.size() ? fp8_gemms_[i] : nlohmann::json(nullptr);
    // A stage that ends on grad_noise_below: the ratios measured while it ran.
    if (i + 1 < stages_.size() && stages_[i + 1].start.on_signal &&
        stages_[i + 1].start.grad_noise_below > 0) {
      s["signal_measurements"] = measurements_[i];
    }
    stages.push_back(std::move(s));
  }
  record["schedule"] = {{"stages", std::move(stages)}, {"label", label_}};
  record["schedule_switches"] = switches_;
}

}  // namespace fp8lab::experiments
