#include "experiments/stats/contrasts.hpp"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

std::map<std::string, std::string> label_settings(const std::string& label) {
  std::map<std::string, std::string> out;
  std::istringstream words(label);
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

std::vector<std::map<std::string, std::string>> asked_combinations(const RunRecord& record) {
  std::vector<std::map<std::string, std::string>> out;
  const auto& other = record.other;  // provenance: source.combinations
  const auto* combinations = other.contains("source") && other["source"].is_object() &&
                                     other["source"].contains("combinations")
                                 ? &other["source"]["combinations"]
                                 : nullptr;
  if (combinations == nullptr || !combinations->is_array()) return out;
  for (const auto& label : *combinations) {
    if (label.is_string()) out.push_back(label_settings(label.get<std::string>()));
  }
  return out;
}

namespace {

// A sweep run's asked settings: its first combination label ("scaling=rowwise fp8_format=E4M3",
// provenance `source.combinations`) as key -> value; empty for a run from no sweep.
std::map<std::string, std::string> asked_settings(const RunRecord& record) {
  auto all = asked_combinations(record);
  return all.empty() ? std::map<std::string, std::string>{} : all.front();
}

// The one asked setting two sweep runs differ in ("" for none or several): what the sweep varied,
// so that tensorwise vs rowwise is one contrast although the scaling also changes the defaults
// of other recipe fields.
std::string single_asked_difference(const RunRecord& a, const RunRecord& b) {
  const auto sa = asked_settings(a), sb = asked_settings(b);
  if (sa.empty() || sb.empty() || sa.size() != sb.size()) return "";
  std::string differing;
  for (const auto& [key, value] : sa) {
    const auto other = sb.find(key);
    if (other == sb.end()) return "";
    if (other->second == value) continue;
    if (!differing.empty()) return "";
    differing = key;
  }
  return differing;
}

// The one recipe field two rows differ in, or "" when they differ in none or several.
std::string single_field_difference(const RunRecord& a, const RunRecord& b) {
  if (!a.recipe.has_value() || !b.recipe.has_value()) return "";
  std::set<std::string> fields;
  for (const auto& [k, v] : *a.recipe) fields.insert(k);
  for (const auto& [k, v] : *b.recipe) fields.insert(k);
  std::string differing;
  for (const auto& field : fields) {
    if (recipe_value(a, field) == recipe_value(b, field)) continue;
    if (!differing.empty()) return "";
    differing = field;
  }
  return differing;
}

// A row's value of a contrast's field: as asked, else as the recipe holds it.
std::string setting_value(const RunRecord& record, const std::string& field) {
  const auto asked = asked_settings(record);
  const auto it = asked.find(field);
  return it != asked.end() ? it->second : recipe_value(record, field);
}

// seed -> tail eval loss of each finished seed of a row.
std::map<std::int64_t, double> tails_by_seed(const RecipeRow& row) {
  std::map<std::int64_t, double> out;
  for (const auto* r : row.runs) {
    if (*r->status != "finished") continue;
    if (auto t = tail_eval_loss(*r); t && *t > 0) out[r->seed.value_or(0)] = *t;
  }
  return out;
}

// (tail A - tail B) / tail B per common finished seed; `seeds` gets the seeds, in order.
std::vector<double> relative_differences(const RecipeRow& a, const RecipeRow& b,
                                         std::vector<std::int64_t>& seeds) {
  const auto ta = tails_by_seed(a), tb = tails_by_seed(b);
  std::vector<double> d;
  for (const auto& [seed, loss] : ta) {
    const auto other = tb.find(seed);
    if (other == tb.end()) continue;
    seeds.push_back(seed);
    d.push_back((loss - other->second) / other->second);
  }
  return d;
}

void judge_contrast(Contrast& c, double band, double alpha) {
  if (!c.interval || c.interval->n < kMinPairedSeeds) {
    c.verdict = "inconclusive";
    c.reason = std::to_string(c.seeds.size()) + " common seed" + (c.seeds.size() == 1 ? "" : "s") +
               "; a test needs " + std::to_string(kMinPairedSeeds);
    return;
  }
  c.test = oriented_named_test(*c.interval, band, alpha);
  c.verdict = c.test->verdict;
  if (c.verdict == "inconclusive") c.reason = power_reason(*c.test);
}

template <class T>
std::optional<double> median_of(const std::vector<T>& values) {
  std::vector<double> v(values.begin(), values.end());
  return median(v);
}

}  // namespace

std::string Contrast::verdict_text() const { return verdict_with_reasons(verdict, reason, test); }

std::string Contrast::title() const {
  return field + " " + worse_value + " vs " + better_value + " (" + run_label(better->first()) +
         ")";
}

std::vector<Contrast> recipe_contrasts(const std::vector<RecipeRow>& rows, double band,
                                       double alpha) {
  std::vector<Contrast> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      if (rows[i].family != rows[j].family) continue;
      auto field = single_asked_difference(rows[i].first(), rows[j].first());
      if (field.empty()) field = single_field_difference(rows[i].first(), rows[j].first());
      if (field.empty()) continue;
      Contrast c;
      c.field = field;
      c.worse = &rows[i];
      c.better = &rows[j];
      auto d = relative_differences(*c.worse, *c.better, c.seeds);
      double sum = 0;
      for (const double v : d) sum += v;
      if (sum < 0) {  // oriented so that A has the higher loss, relative to B's
        std::swap(c.worse, c.better);
        c.seeds.clear();
        d = relative_differences(*c.worse, *c.better, c.seeds);
      }
      c.interval = t_interval(d);
      c.worse_value = setting_value(c.worse->first(), field);
      c.better_value = setting_value(c.better->first(), field);
      judge_contrast(c, band, alpha);
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::string describe_eval_sampling_error(const Resolution& r, double band) {
  if (!r.paired_eval_se) return "";
  std::string text = " The eval set's own sampling error of one seed's paired error is \u00b1" +
                     format_percent(r.paired_eval_se) +
                     " (FP8 minus baseline on the same eval windows, same seed; one eval loss "
                     "alone \u00b1" +
                     format_percent(r.unpaired_eval_se) + ")";
  if (*r.paired_eval_se <= 0) return text + ".";
  const double ratio = band / *r.paired_eval_se;
  // Well below: a third of the band or less, so that it adds little to a seed's spread.
  if (ratio >= 3) return text + ", " + format_number(ratio, "%.0f") + "x below the band.";
  return text + ": not well below the " + format_percent(band) +
         " band; more eval windows (the workload's eval_windows) would lower it.";
}

std::vector<Resolution> sweep_resolution(const std::vector<RecipeRow>& rows,
                                         const std::vector<Contrast>& contrasts, double alpha) {
  std::map<std::string, Resolution> by_family;
  std::map<std::string, std::vector<double>> seeds, sds, contrast_sds, paired_se, unpaired_se;
  for (const auto& row : rows) {
    auto& r = by_family[row.family];
    r.family = row.family;
    ++r.rows;
    if (row.paired.test && row.verdict != "inconclusive") ++r.rows_resolved;
    if (row.paired.test && row.verdict == row.paired.test->verdict &&
        row.paired.test->holds_after_holm()) {
      ++r.rows_held;
    }
    seeds[row.family].push_back(static_cast<double>(row.paired.finished));
    if (row.paired.tail) sds[row.family].push_back(row.paired.tail->sd);
    if (row.paired_eval_se) paired_se[row.family].push_back(*row.paired_eval_se);
    if (row.unpaired_eval_se) unpaired_se[row.family].push_back(*row.unpaired_eval_se);
  }
  for (const auto& c : contrasts) {
    auto& r = by_family[c.worse->family];
    ++r.contrasts;
    if (c.resolved()) ++r.contrasts_resolved;
    if (c.test && c.test->holds_after_holm()) ++r.contrasts_held;
    if (c.interval) contrast_sds[c.worse->family].push_back(c.interval->sd);
  }
  std::vector<Resolution> out;
  for (auto& [family, r] : by_family) {
    r.typical_seeds = static_cast<std::size_t>(median_of(seeds[family]).value_or(0));
    r.typical_sd = median_of(sds[family]);
    r.contrast_sd = median_of(contrast_sds[family]);
    r.paired_eval_se = median_of(paired_se[family]);
    r.unpaired_eval_se = median_of(unpaired_se[family]);
    if (r.typical_seeds >= 2 && r.typical_sd) {
      r.vs_baseline = minimum_detectable_effect(r.typical_seeds, *r.typical_sd, alpha);
    }
    if (r.typical_seeds >= 2 && r.contrast_sd) {
      r.contrast = minimum_detectable_effect(r.typical_seeds, *r.contrast_sd, alpha);
    }
    out.push_back(r);
  }
  return out;
}

std::string describe_resolution(const Resolution& r, double band, double alpha) {
  return std::to_string(r.rows_held) + " of " + std::to_string(r.rows) + " recipe rows and " +
         std::to_string(r.contrasts_held) + " of " + std::to_string(r.contrasts) +
         " contrasts reach a verdict other than inconclusive that holds after Holm (" +
         std::to_string(r.rows_resolved) + " and " + std::to_string(r.contrasts_resolved) +
         " at raw alpha). With " + std::to_string(r.typical_seeds) +
         " seeds per recipe, the effect against the baseline " +
         "detected with 80% power at alpha " + format_number(alpha, "%.3g") +
         " (mde80, noncentral t) is " + format_percent(r.vs_baseline) + " (sd " +
         format_percent(r.typical_sd) + "), so `worse beyond band` needs a mean of about " +
         format_percent(r.vs_baseline ? std::optional(band + *r.vs_baseline) : std::nullopt) +
         "; between two recipes on the same seeds, " + format_percent(r.contrast) + " (sd " +
         format_percent(r.contrast_sd) + ")." + describe_eval_sampling_error(r, band);
}

}  // namespace fp8lab::experiments
