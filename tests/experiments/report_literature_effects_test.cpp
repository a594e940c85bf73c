// Which published effects a sweep's contrasts show (experiments/stats/literature_effects.hpp):
// each contrast is read against the paper's ranking of the two values, hand-made contrasts only.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "experiments/stats/contrasts.hpp"
#include "experiments/stats/literature_effects.hpp"

namespace fp8lab::experiments {
namespace {

nlohmann::json record(const std::string& label, double forward_sqnr) {
  return {{"recipe_label", label},
          {"kind", "fp8"},
          {"final", {{"forward_sqnr_db", forward_sqnr}, {"gradient_sqnr_db", 25.0}}}};
}

struct Pair {
  RunRecord a, b;
  RecipeRow worse, better;
  Pair(double sqnr_a, double sqnr_b)
      : a(run_record_from_json(record("A", sqnr_a))), b(run_record_from_json(record("B", sqnr_b))) {
    worse.runs = {&a};
    better.runs = {&b};
  }
  // With a test of this verdict whose p Holm is `p_holm` (alpha 0.05); "inconclusive": none.
  Contrast contrast(std::string field, std::string worse_value, std::string better_value,
                    std::string verdict, double p_holm = 0.01) const {
    Contrast c;
    c.worse = &worse;
    c.better = &better;
    c.field = std::move(field);
    c.worse_value = std::move(worse_value);
    c.better_value = std::move(better_value);
    c.seeds = {0, 1, 2};
    if (verdict != "inconclusive") {
      NamedTest t;
      t.verdict = verdict;
      t.p_raw = p_holm / 3;
      t.p_holm = p_holm;
      t.family = "exploratory";
      t.family_size = 3;
      c.test = t;
    }
    c.verdict = std::move(verdict);
    return c;
  }
};

TEST_CASE("a contrast is read against the paper's ranking", "[report][literature]") {
  const Pair p(25.6, 31.4);
  struct Case {
    const char* effect;
    const char* field;
    const char* worse_value;
    const char* better_value;
    const char* verdict;
    const char* outcome;  // "": the effect does not read this contrast
  };
  const Case cases[] = {
      // L5: E5M2 forward worse than E4M3 / HYBRID; HYBRID and E4M3 share the forward format.
      {"L5", "fp8_format", "E5M2", "E4M3", "worse", "direction only"},
      {"L5", "fp8_format", "E4M3", "E5M2", "worse", "opposite"},
      {"L5", "fp8_format", "E5M2", "HYBRID", "equivalent", "equivalent"},
      {"L5", "fp8_format", "E5M2", "HYBRID", "inconclusive", "inconclusive"},
      {"L5", "fp8_format", "E5M2", "HYBRID", "worse beyond band", "direction only"},
      {"L5", "fp8_format", "HYBRID", "E4M3", "worse", ""},
      // L4: granularity; two per-tensor scalings are not a granularity contrast.
      {"L4", "scaling", "tensorwise", "mxfp8", "worse", "direction only"},
      {"L4", "scaling", "delayed", "current", "worse", ""},
      // L2 and L3 read their own fields only.
      {"L2", "mx_scale_mode", "floor", "rceil", "worse", "direction only"},
      {"L2", "fp8_format", "E5M2", "E4M3", "worse", ""},
      {"L3", "norm_affine_precision", "high", "mx", "worse", "opposite"},
      {"L9", "fp8_format", "E5M2", "E4M3", "worse", ""},
  };
  for (const Case& c : cases) {
    INFO(c.effect << ": " << c.field << " " << c.worse_value << " vs " << c.better_value << " "
                  << c.verdict);
    CHECK(effect_outcome(c.effect, p.contrast(c.field, c.worse_value, c.better_value, c.verdict)) ==
          c.outcome);
  }
}

TEST_CASE("a contrast's reading follows Holm: a raw-alpha `worse` the correction does not keep is "
          "inconclusive",
          "[report][literature]") {
  const Pair p(25.6, 31.4);
  // p raw 0.02 < alpha, p Holm 0.06 > alpha (family of 3): not `direction only`.
  const auto raw_only = p.contrast("fp8_format", "E5M2", "E4M3", "worse", 0.06);
  CHECK_FALSE(raw_only.test->holds_after_holm());
  CHECK(effect_outcome("L5", raw_only) == "inconclusive");
  CHECK(effect_outcome("L5", p.contrast("fp8_format", "E4M3", "E5M2", "worse", 0.06)) ==
        "inconclusive");
  CHECK(effect_outcome("L5", p.contrast("fp8_format", "E5M2", "HYBRID", "equivalent", 0.3)) ==
        "inconclusive");
  // Kept by Holm: the word stands.
  CHECK(effect_outcome("L5", p.contrast("fp8_format", "E5M2", "E4M3", "worse", 0.05)) ==
        "direction only");
  // A contrast without a test has no word.
  auto untested = p.contrast("fp8_format", "E5M2", "E4M3", "worse");
  untested.test.reset();
  CHECK(effect_outcome("L5", untested) == "inconclusive");
  const auto effects =
      literature_effects({p.contrast("mx_scale_mode", "floor", "rceil", "worse", 0.06)});
  CHECK(effects[1].word == "not tested");
  CHECK(effects[1].summary ==
        "not tested (this sweep's workload is not the paper's setting): 1 contrast: 0 direction "
        "only, 0 opposite, 0 equivalent, 1 inconclusive, after Holm");
}

TEST_CASE("the effects list says which effects a sweep shows", "[report][literature]") {
  const Pair p(25.6, 31.4);
  const std::vector<Contrast> contrasts = {
      p.contrast("fp8_format", "E5M2", "E4M3", "worse"),
      p.contrast("fp8_format", "E5M2", "HYBRID", "equivalent"),
      p.contrast("fp8_format", "HYBRID", "E4M3", "equivalent"),  // not an L5 contrast
  };
  const auto effects = literature_effects(contrasts);
  REQUIRE(effects.size() == 5);
  CHECK(effects[0].id == "L1");
  CHECK(effects[0].word == "not tested");
  CHECK(effects[0].summary == "not tested: GEMM-level, not shown by a training sweep");
  CHECK(effects[1].word == "not tested");
  CHECK(effects[1].summary ==
        "not tested: no two recipes of this sweep differ only in mx_scale_mode");
  const auto& l5 = effects[4];
  CHECK(l5.id == "L5");
  REQUIRE(l5.lines.size() == 2);
  // Micikevicius et al. publish no loss figure for E5M2 forward: L5's loss half is not tested
  // whatever the contrasts show; what they show is counted beside the word.
  CHECK(l5.word == "not tested");
  CHECK(l5.summary ==
        "not tested (the paper publishes no loss figure for E5M2 forward (docs/literature.md, "
        "L5)): 2 contrasts: 1 direction only, 0 opposite, 1 equivalent, 0 inconclusive, after "
        "Holm");
  CHECK(l5.claim.find("publish no training-loss figure") != std::string::npos);
  // Each line names the values, both rows' forward SQNR and the reading.
  CHECK(l5.lines[0].find("fp8_format E5M2 vs E4M3") == 0);
  CHECK(l5.lines[0].find("forward SQNR 25.6 dB") != std::string::npos);
  CHECK(l5.lines[0].find("forward SQNR 31.4 dB") != std::string::npos);
  CHECK(l5.lines[0].find("direction only") != std::string::npos);
  // L2 (a published direction): the paper's direction, and none against it, is direction only.
  const auto l2 = literature_effects({p.contrast("mx_scale_mode", "floor", "rceil", "worse"),
                                      p.contrast("mx_scale_mode", "even", "ceil", "equivalent")});
  CHECK(l2[1].word == "direction only");
  CHECK(l2[1].summary ==
        "direction only (this sweep's workload is not the paper's setting: never reproduced): 2 "
        "contrasts: 1 direction only, 0 opposite, 1 equivalent, 0 inconclusive, after Holm");
  // A contrast against the paper's direction, or none with a direction: not tested (a sweep's
  // workload is not the paper's setting, so `not reproduced` is never its word).
  const auto opposite = literature_effects({p.contrast("mx_scale_mode", "floor", "rceil", "worse"),
                                            p.contrast("mx_scale_mode", "rceil", "even", "worse")});
  CHECK(opposite[1].word == "not tested");
  const auto none =
      literature_effects({p.contrast("mx_scale_mode", "floor", "rceil", "equivalent")});
  CHECK(none[1].word == "not tested");
}

}  // namespace
}  // namespace fp8lab::experiments
