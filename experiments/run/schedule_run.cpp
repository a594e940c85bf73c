#include "experiments/run/schedule_run.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "experiments/linear/beyond_gemm.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/run/run_executor.hpp"
#include "recipes/lowering.hpp"

namespace fp8lab::experiments {
namespace {

std::string plan_text(const sim::scaling::QuantizePlan& p) {
  using sim::scaling::QuantizeKind;
  if (p.kind == QuantizeKind::kHighPrecision) return "high_precision";
  std::string out = fmt::format("{} {}", sim::scaling::to_string(p.kind), sim::spec(p.format).name);
  if (p.block.rows != 0 || p.block.cols != 0) {
    out += fmt::format(" blocks {}x{}", p.block.rows, p.block.cols);
  }
  if (p.pow2) out += " pow2";
  if (p.rht) out += " rht";
  if (p.stochastic_rounding) out += " stochastic_rounding";
  return out;
}

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
          recipe && recipes::gemm_runs_fp8(*recipe, g) ? plan_text(recipes::plan(*recipe, o, g))
                                                       : std::string("high_precision");
    }
  }
  return out;
}

ScheduleRun::ScheduleRun(const recipes::Recipe& recipe, std::int64_t steps_planned)
    : label_(recipes::schedule_label(recipe)),
      stages_(recipes::schedule_stages(recipe)),
      steps_planned_(steps_planned) {
  for (std::size_t i = 0; i < stages_.size(); ++i) {
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

void ScheduleRun::wrap(ModelHooks& hooks) {
  auto inner = std::move(hooks.before_step);
  hooks.before_step = [this, inner](TrainableModel& model, std::int64_t step) {
    if (fp8_gemms_.empty()) fp8_gemms_.push_back(fp8_gemms_of(model));  // stage 0, as converted
    for (std::size_t i = 1; i < starts_.size(); ++i) {
      if (starts_[i] == step) switch_to(model, i, step);
    }
    if (inner) inner(model, step);
  };
}

void ScheduleRun::switch_to(TrainableModel& model, std::size_t stage, std::int64_t step) {
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
    nlohmann::json s{{"stage", static_cast<std::int64_t>(i)},
                     {"from_step", starts_[i]},
                     {"until_step", i + 1 < starts_.size() ? starts_[i + 1] : steps_planned_},
                     {"recipe_label", label_of(recipe)},
                     {"plans", stage_plans(recipe)}};
    s["until"] = i == 0 ? nlohmann::json(nullptr)
                        : nlohmann::json(recipes::start_text(stages_[i].start));
    s["recipe_canonical"] = recipe ? nlohmann::json(recipes::canonical_string(*recipe))
                                   : nlohmann::json(nullptr);
    // The Linears' FP8 GEMMs as the run had them at the stage's first step (null: not reached).
    s["fp8_gemms"] = i < fp8_gemms_.size() ? fp8_gemms_[i] : nlohmann::json(nullptr);
    stages.push_back(std::move(s));
  }
  record["schedule"] = {{"stages", std::move(stages)}, {"label", label_}};
  record["schedule_switches"] = switches_;
}

}  // namespace fp8lab::experiments
