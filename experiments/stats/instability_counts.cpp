#include "experiments/stats/instability_counts.hpp"

#include <map>
#include <set>

#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

const std::string& kind_of(const RunRecord& r) { return r.kind; }

// The baseline family of a baseline (its own id) or of a run compared with one.
std::string family_of(const RunRecord& r) {
  const auto id = kind_of(r) == "baseline" ? r.run_id : r.baseline_run_id.value_or("");
  return id.empty() ? std::string("-") : baseline_family(id);
}

// Runs that ended as a result of their training (finished, diverged, unstable): a run that threw
// says nothing about stability.
bool judged(const RunRecord& r) { return *r.status != "failed"; }

void fisher(ArmInstability& line) {
  if (line.arm.runs == 0 || line.baseline.runs == 0) return;
  line.p_two_sided = fisher_exact_two_sided(line.arm.unstable, line.arm.runs,
                                            line.baseline.unstable, line.baseline.runs);
  line.p_greater = fisher_exact_greater(line.arm.unstable, line.arm.runs, line.baseline.unstable,
                                        line.baseline.runs);
}

}  // namespace

bool met_instability(const RunRecord& record) {
  const auto& status = *record.status;
  return status == "unstable" || status == "diverged";
}

std::string UnstableCount::text() const {
  if (runs == 0) return "no runs";
  return std::to_string(unstable) + " of " + std::to_string(runs) + " [" +
         format_percent(interval.low) + ", " + format_percent(interval.high) + "]";
}

UnstableCount count_unstable(const std::vector<const RunRecord*>& runs) {
  UnstableCount out;
  for (const auto* r : runs) {
    if (!judged(*r)) continue;
    ++out.runs;
    if (met_instability(*r)) ++out.unstable;
  }
  if (out.runs > 0) out.interval = clopper_pearson(out.unstable, out.runs);
  return out;
}

const ArmInstability* InstabilityFacts::of(const RecipeRow& row) const {
  for (const auto& a : arms) {
    if (a.row == &row) return &a;
  }
  return nullptr;
}

const ContrastInstability* InstabilityFacts::of(const Contrast& contrast) const {
  for (const auto& c : contrasts) {
    if (c.contrast == &contrast) return &c;
  }
  return nullptr;
}

std::string InstabilityFacts::rule_text() const {
  std::string text;
  for (const auto& rule : rules) text.append(text.empty() ? "" : "; ").append(rule);
  if (text.empty()) text = "a non-finite training loss (the records carry no instability rule)";
  if (!rules.empty() && runs_without_rule > 0) {
    text += "; " + std::to_string(runs_without_rule) +
            " records older than the rule count a non-finite loss only";
  }
  if (rules.size() > 1) text = "the records were judged by different rules: " + text;
  return text;
}

InstabilityFacts instability_facts(const std::vector<RunRecord>& records,
                                   const std::vector<RecipeRow>& rows,
                                   const std::vector<Contrast>& contrasts) {
  InstabilityFacts out;
  std::set<std::string> rules;
  // Per family: its baselines and null runs, in record order.
  std::map<std::string, std::vector<const RunRecord*>> baselines, nulls;
  std::vector<std::string> families;
  for (const auto& r : records) {
    if (const auto description = r.instability_description()) {
      if (rules.insert(*description).second) out.rules.push_back(*description);
    } else if (*r.status != "failed") {
      ++out.runs_without_rule;
    }
    const auto kind = kind_of(r);
    if (kind != "baseline" && kind != "null") continue;
    const auto family = family_of(r);
    if (!baselines.contains(family) && !nulls.contains(family)) families.push_back(family);
    (kind == "baseline" ? baselines : nulls)[family].push_back(&r);
  }
  for (const auto& family : families) {
    ArmInstability base{family, "baseline", nullptr, count_unstable(baselines[family]), {}, {}, {}};
    out.arms.push_back(base);
    if (!nulls[family].empty()) {
      std::vector<const RunRecord*> their_baselines;
      for (const auto* r : nulls[family]) {
        if (const auto* b = find_baseline(records, *r)) their_baselines.push_back(b);
      }
      ArmInstability null{
          family, "null", nullptr, count_unstable(nulls[family]), count_unstable(their_baselines),
          {},     {}};
      fisher(null);
      out.arms.push_back(null);
    }
  }
  for (const auto& row : rows) {
    std::vector<const RunRecord*> their_baselines;
    for (const auto* r : row.runs) {
      if (const auto* b = find_baseline(records, *r)) their_baselines.push_back(b);
    }
    ArmInstability line{row.family,
                        run_label(row.first()),
                        &row,
                        count_unstable(row.runs),
                        count_unstable(their_baselines),
                        {},
                        {}};
    fisher(line);
    out.arms.push_back(line);
  }
  for (const auto& c : contrasts) {
    ContrastInstability line{&c, count_unstable(c.worse->runs), count_unstable(c.better->runs), {}};
    if (line.a.runs > 0 && line.b.runs > 0) {
      line.p_two_sided =
          fisher_exact_two_sided(line.a.unstable, line.a.runs, line.b.unstable, line.b.runs);
    }
    out.contrasts.push_back(line);
  }
  return out;
}

}  // namespace fp8lab::experiments
