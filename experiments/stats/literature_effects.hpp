// Which published FP8 effects (docs/literature.md, L1-L5) a sweep's contrasts bear on, and what
// they show (issue 20 §4: the report states which of L1-L5 a sweep shows). No LibTorch.
//
// An effect is read off the contrasts (contrasts.hpp) whose one differing field is the effect's
// own setting, between two values the paper ranks: L2 mx_scale_mode (floor worse than even,
// worse than ceil / rceil), L3 norm_affine_precision / activation_precision (mx worse than bf16,
// worse than high), L4 scaling by granularity (per tensor worse than rowwise, worse than 1x128
// blocks, worse than MXFP8), L5 fp8_format (E5M2 worse than E4M3 / HYBRID, whose forward formats
// are the same). Per contrast, from its named test (named_tests.hpp: oriented_named_test), each
// only where the test holds after the family's Holm correction:
//   direction only     worse or worse beyond band, with the paper's worse value worse
//   opposite           worse or worse beyond band, with the other value worse
//   equivalent         TOST inside the practical band: no difference that matters at this band
//   inconclusive       none of these, or a word that does not hold after Holm
// Per effect, one of docs/literature.md's words (issue 31 §9, issue 42 item 3): `direction only`
// when a contrast shows the paper's direction and none the opposite, else `not tested`: when no
// contrast bears on it, when the bearing contrasts show no direction (the summary counts them:
// `not reproduced` needs the paper's setting, which a sweep's workload is not), and always for
// L5, whose paper publishes no loss figure for E5M2 forward (its ranking is this project's
// expectation). Never `reproduced`. L1 is GEMM-level (`fp8lab literature L1`): not tested by a
// training sweep.
#pragma once

#include <string>
#include <vector>

#include "experiments/stats/contrasts.hpp"

namespace fp8lab::experiments {

struct EffectReading {
  std::string id;                  // "L5"
  std::string claim;               // the paper's claim, one line
  std::vector<std::string> lines;  // one per bearing contrast; empty: not in this sweep
  std::string word;                // direction only | not tested
  std::string summary;             // "2 contrasts: 0 direction only, 0 opposite, 2 equivalent, ..."
};

// The published effects (L1-L5, in order) with what `contrasts` show of each.
std::vector<EffectReading> literature_effects(const std::vector<Contrast>& contrasts);

// One contrast's reading: "direction only", "opposite", "equivalent", "inconclusive", or "" when
// the contrast's values are not ranked by the effect (e.g. fp8_format HYBRID vs E4M3 for L5). A
// contrast's words are those of oriented_named_test (never `not worse` or `better`), and each
// counts only where its test holds after Holm (NamedTest::holds_after_holm): a `worse` at raw
// alpha that the family's correction does not keep, or a contrast without a test, reads
// "inconclusive".
std::string effect_outcome(const std::string& effect_id, const Contrast& contrast);

}  // namespace fp8lab::experiments
