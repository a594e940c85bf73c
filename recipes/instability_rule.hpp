// The pre-registered instability rule (issue 31 §5): when a training run counts as `unstable`.
// A sweep states it under the key `instability:` before it runs; every run of the sweep (FP8,
// baseline, null) carries it (`fp8lab run --instability TEXT`) and its record says which rule it
// was judged by. A non-finite training loss is always an instability, and keeps its status name
// `diverged` (records written before this rule existed use it); this rule adds the finite blow-ups.
//
//   instability:
//     loss_above: 0.2        # a training loss above this value (absolute), or
//     over_running_min: 10   # above k x the lowest training loss of the steps before (k > 1)
//     for_steps: 1           # optional (default 1): on this many consecutive steps
//     after_step: 200        # optional (default 0): count from this step on; the steps before
//                            # never count (their losses still set the running minimum)
//
// At least one of loss_above and over_running_min; both given: either threshold counts.
// Without the key: over_running_min 10 for 10 steps after step 0 (a loss ten times its best for
// ten steps in a row is a blow-up in every workload fp8lab ships, and no normal curve does it).
// The text form (`fp8lab run --instability`, the record's `instability.text`) is the same fields
// as `key=value` joined by commas, e.g. `loss_above=0.2,for_steps=1,after_step=200`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "recipes/error.hpp"

namespace fp8lab::recipes {

struct InstabilityRule {
  std::optional<double> loss_above;
  std::optional<double> over_running_min;
  std::int64_t for_steps = 1;
  std::int64_t after_step = 0;
  Site site;  // where the sweep file stated it (line 0: the default)

  bool operator==(const InstabilityRule& other) const {
    return loss_above == other.loss_above && over_running_min == other.over_running_min &&
           for_steps == other.for_steps && after_step == other.after_step;
  }
};

InstabilityRule default_instability_rule();

// The text form: every field that is set, in the order loss_above, over_running_min, for_steps,
// after_step, numbers in their shortest round-trip form.
std::string instability_rule_text(const InstabilityRule& rule);

// One sentence: "training loss > 0.2 on 1 consecutive step from step 200 on (...)".
std::string describe_instability_rule(const InstabilityRule& rule);

// The text form back; RecipeError at `site` naming `field` (e.g. "--instability") and what is
// accepted when a key is unknown or repeated, a value is not a number or out of range, or
// neither threshold is given.
InstabilityRule parse_instability_rule_text(std::string_view text, const Site& site,
                                            const std::string& field);

// Applies the rule to a run's training losses, one step at a time, in step order.
class InstabilityWatch {
 public:
  explicit InstabilityWatch(InstabilityRule rule) : rule_(std::move(rule)) {}

  // Feeds step `step`'s finite training loss. True when the rule is met at this step (the last
  // of `for_steps` consecutive steps above a threshold); streak_start() is then the first of
  // them and reason() says which threshold with the values.
  bool observe(std::int64_t step, double loss);
  std::int64_t streak_start() const { return streak_start_; }
  const std::string& reason() const { return reason_; }

 private:
  InstabilityRule rule_;
  std::optional<double> running_min_;  // over the steps fed before
  std::int64_t streak_ = 0, streak_start_ = -1;
  std::string reason_;
};

}  // namespace fp8lab::recipes
