// A sweep's pre-registered hypotheses (issue 31 §2): the key `hypotheses:` names the verdicts
// (a recipe against its baseline) and contrasts (two recipes on the same seeds) that form the
// report's confirmatory family, with the band and the significance level they are tested at.
// Every other verdict and contrast of the report is exploratory (experiments/stats/
// multiplicity.hpp). The instability rule (issue 31 §5) is pre-registered beside it, under the
// sweep key `instability:` (instability_rule.hpp).
//
//   hypotheses:
//     alpha: 0.05               # optional (default 0.05): every named test's level, in (0, 0.5)
//     band: 0.0025              # optional: the practical band (the same as practical_band, which
//                               # it sets; both given must agree)
//     tests:                    # required, non-empty; each one combination label, or two
//       - verdict: scaling=mxfp8 fp8_format=HYBRID
//       - contrast: [scaling=delayed fp8_format=E5M2, scaling=delayed fp8_format=E4M3]
//
// A label names every sweep parameter once, `field=value` with one of its values, in any order
// (stored in the parameters' order, as the sweep's request labels); a contrast's two labels
// differ in exactly one parameter (the report's contrasts are those). method: ablate takes none.
#pragma once

#include <string>
#include <vector>

#include "recipes/error.hpp"

namespace fp8lab::recipes {

struct SweepHypothesis {
  std::string kind;                 // "verdict" or "contrast"
  std::vector<std::string> labels;  // one (verdict) or two (contrast), as assignment_text
  Site site;
};

struct SweepHypotheses {
  bool given = false;
  double alpha = 0.05;
  bool has_band = false;
  double band = 0;
  Site site;
  std::vector<SweepHypothesis> tests;
};

// One sweep parameter as a label may name it: its field and its values' texts.
struct LabelParameter {
  std::string key;
  std::vector<std::string> values;
};

// Checks each test's labels against the parameters and rewrites them in the parameters' order;
// RecipeError naming hypotheses.tests[i], the label and what is accepted.
void check_hypotheses(SweepHypotheses& hypotheses, const std::vector<LabelParameter>& parameters);

}  // namespace fp8lab::recipes
