#include "experiments/stats/literature_effects.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <optional>

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

struct Effect {
  const char* id;
  const char* claim;
  std::vector<std::string> fields;
  // Higher = worse by the paper; values absent are not ranked.
  std::map<std::string, int> worse_rank;
  // Why no sweep can test the effect's loss half, when the paper publishes no loss claim to test
  // (the ranking is then this project's expectation); null: the paper states the direction.
  const char* no_loss_claim = nullptr;
};

const std::vector<Effect>& effects() {
  static const std::vector<Effect> table = {
      {"L1",
       "DeepSeek-V3: Hopper FP8 accumulation keeps ~14 bits (max relative error near 2% at "
       "K = 4096); promotion every 128 fixes it. GEMM-level: `fp8lab literature L1`",
       {},
       {}},
      {"L2",
       "Mishra et al. 2025: floor-rounded MX scales clip block maxima and can diverge; "
       "rounding up (rceil) does not",
       {"mx_scale_mode"},
       {{"floor", 2}, {"even", 1}, {"ceil", 0}, {"rceil", 0}}},
      {"L3",
       "Su et al. 2025: MX-quantized LayerNorm affine / activations destabilize training; "
       "keeping them in high precision averts it",
       {"norm_affine_precision", "activation_precision"},
       {{"mx", 2}, {"bf16", 1}, {"high", 0}}},
      {"L4",
       "DeepSeek-V3 / torchao: under outlier channels, finer scaling (rowwise, 1x128, MXFP8) "
       "has less loss error than per-tensor",
       {"scaling"},
       {{"delayed", 3},
        {"current", 3},
        {"tensorwise", 3},
        {"rowwise", 2},
        {"rowwise_with_gw_hp", 2},
        {"block", 1},
        {"mxfp8", 0}}},
      {"L5",
       "Micikevicius et al. 2022 recommend E4M3 for weights and activations, E5M2 (one mantissa "
       "bit fewer) for gradients; they publish no training-loss figure for E5M2 in the forward "
       "pass. Ranked here: E5M2 forward worse, this project's expectation",
       {"fp8_format"},
       {{"E5M2", 1}, {"E4M3", 0}, {"HYBRID", 0}},
       "the paper publishes no loss figure for E5M2 forward (docs/literature.md, L5)"},
  };
  return table;
}

const Effect* find_effect(const std::string& id) {
  for (const auto& e : effects()) {
    if (id == e.id) return &e;
  }
  return nullptr;
}

std::optional<int> rank_of(const Effect& e, const std::string& value) {
  const auto it = e.worse_rank.find(value);
  if (it == e.worse_rank.end()) return std::nullopt;
  return it->second;
}

std::string sqnr_text(const RecipeRow& row) {
  return fmt::format("forward SQNR {} dB, gradient {} dB",
                     format_number(row.median_at(&FinalFigures::forward_sqnr_db), "%.1f"),
                     format_number(row.median_at(&FinalFigures::gradient_sqnr_db), "%.1f"));
}

}  // namespace

std::string effect_outcome(const std::string& effect_id, const Contrast& c) {
  const Effect* e = find_effect(effect_id);
  if (e == nullptr) return "";
  bool bears = false;
  for (const auto& f : e->fields) bears = bears || f == c.field;
  if (!bears) return "";
  const auto worse = rank_of(*e, c.worse_value);
  const auto better = rank_of(*e, c.better_value);
  if (!worse || !better || *worse == *better) return "";
  // A word counts only where its test holds after the family's Holm correction (named_tests.hpp).
  if (!c.test || !c.test->holds_after_holm()) return "inconclusive";
  if (c.verdict == "worse" || c.verdict == "worse beyond band") {
    return *worse > *better ? "direction only" : "opposite";
  }
  if (c.verdict == "equivalent") return c.verdict;
  return "inconclusive";
}

std::vector<EffectReading> literature_effects(const std::vector<Contrast>& contrasts) {
  std::vector<EffectReading> readings;
  for (const auto& e : effects()) {
    EffectReading r{e.id, e.claim, {}, "", ""};
    std::map<std::string, int> counts;
    for (const auto& c : contrasts) {
      const std::string outcome = effect_outcome(e.id, c);
      if (outcome.empty()) continue;
      ++counts[outcome];
      r.lines.push_back(fmt::format(
          "{} {} vs {} (recipe B: {}): {} vs B {}; {}: {}; {}{}", c.field, c.worse_value,
          c.better_value, run_label(c.better->first()), sqnr_text(*c.worse), sqnr_text(*c.better),
          c.seeds.size() == 1 ? "1 seed" : fmt::format("{} seeds", c.seeds.size()),
          c.interval ? describe_interval(*c.interval) : std::string("-"), outcome,
          c.test ? " (" + c.verdict_text() + "; " + describe_p_values(*c.test) + ")"
                 : " (" + c.verdict_text() + ")"));
    }
    if (e.fields.empty()) {
      r.word = "not tested";
      r.summary = "not tested: GEMM-level, not shown by a training sweep";
    } else if (r.lines.empty()) {
      r.word = "not tested";
      r.summary = "not tested: no two recipes of this sweep differ only in " +
                  fmt::format("{}", fmt::join(e.fields, " or "));
    } else {
      // docs/literature.md's words: `not reproduced` needs the paper's setting, which a sweep's
      // workload never is, so an effect whose direction does not show is `not tested` here, with
      // what the contrasts measured beside it.
      const bool direction = e.no_loss_claim == nullptr && counts["direction only"] > 0 &&
                             counts["opposite"] == 0;
      r.word = direction ? "direction only" : "not tested";
      const std::string why =
          e.no_loss_claim != nullptr ? std::string(e.no_loss_claim)
          : direction ? std::string("this sweep's workload is not the paper's setting: never "
                                    "reproduced")
                      : std::string("this sweep's workload is not the paper's setting");
      r.summary = fmt::format("{} ({}): {} contrast{}: {} direction only, {} opposite, {} "
                              "equivalent, {} inconclusive, after Holm",
                              r.word, why, r.lines.size(), r.lines.size() == 1 ? "" : "s",
                              counts["direction only"], counts["opposite"], counts["equivalent"],
                              counts["inconclusive"]);
    }
    readings.push_back(std::move(r));
  }
  return readings;
}

}  // namespace fp8lab::experiments
