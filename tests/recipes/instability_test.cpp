// The instability rule (recipes/instability_rule.hpp, issue 31 §5): the sweep key and its errors,
// the text form that carries it to each run, the default, and when the watch trips on a loss curve.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/instability_rule.hpp"
#include "recipes/sweep.hpp"

using namespace fp8lab::recipes;

namespace {

const std::string kHead = "workloads: [mlp]\nparameters:\n  fp8_format: {values: [E4M3]}\n";

std::string sweep_error(const std::string& instability) {
  try {
    parse_sweep_text(kHead + instability, "s.yaml");
  } catch (const RecipeError& e) {
    return e.what();
  }
  return "no error";
}

// The step at which `rule` trips on `losses` (step i = losses[i]), -1 when it never does.
std::int64_t trip_step(const InstabilityRule& rule, const std::vector<double>& losses,
                       std::int64_t* streak_start = nullptr) {
  InstabilityWatch watch(rule);
  for (std::size_t i = 0; i < losses.size(); ++i) {
    if (watch.observe(static_cast<std::int64_t>(i), losses[i])) {
      if (streak_start != nullptr) *streak_start = watch.streak_start();
      return static_cast<std::int64_t>(i);
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("instability: read from the sweep, with its default and its text form") {
  const Sweep plain = parse_sweep_text(kHead, "s.yaml");
  CHECK(plain.instability == default_instability_rule());
  CHECK(plain.instability.site.line == 0);
  CHECK(instability_rule_text(plain.instability) ==
        "over_running_min=10,for_steps=10,after_step=0");

  const Sweep l3 =
      parse_sweep_text(kHead + "instability: {loss_above: 0.2, after_step: 200}\n", "s.yaml");
  REQUIRE(l3.instability.loss_above);
  CHECK(*l3.instability.loss_above == 0.2);
  CHECK_FALSE(l3.instability.over_running_min);
  CHECK(l3.instability.for_steps == 1);
  CHECK(l3.instability.after_step == 200);
  CHECK(l3.instability.site.line == 4);
  const auto text = instability_rule_text(l3.instability);
  CHECK(text == "loss_above=0.2,for_steps=1,after_step=200");
  CHECK(parse_instability_rule_text(text, {"x", 0}, "--instability") == l3.instability);
  CHECK(describe_instability_rule(l3.instability) ==
        "training loss > 0.2 on 1 consecutive step from step 200 on (or a non-finite loss: "
        "diverged)");
  // Both thresholds round-trip.
  InstabilityRule both;
  both.loss_above = 1.5;
  both.over_running_min = 3.25;
  both.for_steps = 4;
  CHECK(parse_instability_rule_text(instability_rule_text(both), {}, "f") == both);
}

TEST_CASE("instability: bad values are refused naming the field and what is accepted") {
  CHECK(sweep_error("instability: {loss_above: -1}\n") ==
        "s.yaml:4: instability.loss_above: out of range: '-1'; accepted: a training loss > 0");
  CHECK(sweep_error("instability: {over_running_min: 1}\n") ==
        "s.yaml:4: instability.over_running_min: out of range: '1'; accepted: a factor > 1, e.g. "
        "10");
  CHECK(sweep_error("instability: {loss_above: 0.2, for_steps: 0}\n")
            .find("instability.for_steps: out of range: '0'") != std::string::npos);
  CHECK(sweep_error("instability: {loss_above: 0.2, after_step: 1.5}\n")
            .find("instability.after_step: wrong type: expected an integer") != std::string::npos);
  CHECK(sweep_error("instability: {loss_above: abc}\n")
            .find("instability.loss_above: wrong type: expected a number") != std::string::npos);
  CHECK(sweep_error("instability: {for_steps: 3}\n").find("instability: needs a threshold") !=
        std::string::npos);
  CHECK(sweep_error("instability: {loss_abvoe: 0.2}\n").find("did you mean 'loss_above'") !=
        std::string::npos);
  CHECK(sweep_error("instability: 0.2\n").find("instability: expected a mapping") !=
        std::string::npos);
  CHECK(sweep_error("instability: {loss_above: inf}\n").find("out of range") != std::string::npos);
  // The text form's own errors.
  const auto text_error = [](const std::string& text) {
    try {
      parse_instability_rule_text(text, {"--instability", 0}, "--instability");
    } catch (const RecipeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(text_error("loss_above=0.2,loss_above=0.3").find("given twice") != std::string::npos);
  CHECK(text_error("loss_above").find("expected key=value") != std::string::npos);
  CHECK(text_error("").find("expected key=value") != std::string::npos);
  CHECK(text_error("for_steps=2").find("needs a threshold") != std::string::npos);
}

TEST_CASE("instability: the watch trips on the rule's step, not before") {
  InstabilityRule l3;
  l3.loss_above = 0.2;
  l3.after_step = 3;
  // Above 0.2 at steps 1 and 2 (before after_step: not counted), then at step 5.
  CHECK(trip_step(l3, {1.0, 0.5, 0.3, 0.1, 0.05, 0.25, 0.04}) == 5);
  CHECK(trip_step(l3, {1.0, 0.5, 0.3, 0.1, 0.05, 0.2, 0.04}) == -1);  // 0.2 is not above

  InstabilityRule streak;
  streak.loss_above = 1.0;
  streak.for_steps = 3;
  std::int64_t start = -1;
  // Two steps above, a dip, then three: trips at the third of those, the streak from step 4.
  CHECK(trip_step(streak, {0.5, 2, 2, 0.5, 2, 2, 2, 0.5}, &start) == 6);
  CHECK(start == 4);
  CHECK(trip_step(streak, {0.5, 2, 2, 0.5, 2, 2, 0.5}) == -1);

  // The running minimum is over the steps before, not including the step itself.
  InstabilityRule ratio;
  ratio.over_running_min = 10;
  CHECK(trip_step(ratio, {5.0, 1.0, 9.9, 10.5, 0.5}) == 3);  // 10.5 > 10 x 1.0
  CHECK(trip_step(ratio, {5.0, 1.0, 9.9, 10.0}) == -1);      // 10 is not above
  CHECK(trip_step(ratio, {100.0}) == -1);                    // no minimum yet at step 0
  // The default: ten steps at more than ten times the best loss; nine are not enough.
  std::vector<double> nine(12, 0.1), ten(12, 0.1);
  nine[0] = ten[0] = 4.0;
  for (std::size_t i = 2; i < 11; ++i) nine[i] = 1.01;  // steps 2-10: nine steps
  for (std::size_t i = 2; i < 12; ++i) ten[i] = 1.01;   // steps 2-11: ten steps
  CHECK(trip_step(default_instability_rule(), nine) == -1);
  CHECK(trip_step(default_instability_rule(), ten, &start) == 11);
  CHECK(start == 2);

  InstabilityWatch watch(l3);
  for (int i = 0; i < 4; ++i) watch.observe(i, 0.1);
  REQUIRE(watch.observe(4, 357.0));
  CHECK(watch.reason() == "training loss 357 > 0.2 (loss_above) on 1 consecutive step from step 4");
}
