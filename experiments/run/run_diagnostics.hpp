// What an FP8 run records about where it broke (issue 18 §3-4, docs/results-schema.md): the
// first non-finite value (experiments/linear/non_finite.hpp) and the switches of the recipe's
// autoswitch rule (experiments/linear/autoswitch.hpp). One object per run, shared by its hooks.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/linear/autoswitch.hpp"
#include "experiments/linear/non_finite.hpp"
#include "experiments/results/run_record.hpp"
#include "recipes/recipe.hpp"

namespace torch::nn {
class Module;
}

namespace fp8lab::experiments {

// Throws std::invalid_argument listing `linears` (a model's backend Linears, by fully qualified
// name) unless the fault names one of them: `fp8lab run --inject-nan` checks this before training,
// so that a misspelt layer is bad input (exit 2), not a failed run.
void check_injection_target(const FaultInjection& fault, const std::vector<std::string>& linears);

class RunDiagnostics {
 public:
  RunDiagnostics(recipes::Autoswitch rule, std::optional<FaultInjection> injection);

  // Gives every backend Linear of `model` (after conversion) its LayerWatch. A fault injection
  // naming no Linear of the model throws std::invalid_argument listing them.
  void attach(torch::nn::Module& model);
  void before_step(std::int64_t step) { watch_->set_step(step); }
  // The autoswitch rule over the step's statistics (call before they are reset); after the first
  // step, the Fp8Linears that did not run in it (convert_model.hpp: fp8_linears_not_run), named
  // in a warning on stderr (the run's log).
  void after_step(torch::nn::Module& model, std::int64_t step);
  // The rule reads every step's statistics: operands are measured on every step.
  bool measures_every_step() const { return rule_.enabled; }

  std::optional<NonFiniteSite> first_non_finite() const { return watch_->first(); }
  const std::vector<AutoswitchEvent>& autoswitch_events() const { return events_; }
  // "first_non_finite" (null when every value stayed finite), "fp8_linears_not_run" (null when no
  // training step completed), "autoswitch" (the rule and its switches, when the rule is on) and
  // "fault_injection" (when a fault was injected).
  void add_to_record(RunRecord& record) const;

 private:
  recipes::Autoswitch rule_;
  std::shared_ptr<NonFiniteWatch> watch_ = std::make_shared<NonFiniteWatch>();
  std::vector<AutoswitchEvent> events_;
  std::optional<std::vector<std::string>> not_run_;  // set after the first step
};

nlohmann::json to_json(const NonFiniteSite& site);
nlohmann::json to_json(const AutoswitchEvent& event);

}  // namespace fp8lab::experiments
