#include "experiments/stats/named_tests.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

// The four tests: beyond band, TOST, mean = 0, non-inferiority.
enum class Kind { beyond, tost, zero, upper };

struct Candidate {
  const char* test;
  double p;
  double level;
  Kind kind;
};

// The test whose power seeds_for_80 gives (named_tests.hpp): the verdict's own test where that
// test is at the band (beyond band, TOST, non-inferiority); else (worse, better, inconclusive) the
// test at the band that can settle the row at the observed mean: TOST inside the band,
// non-inferiority below -b, the test of mean = +b from +b up.
Kind settling_kind(Kind chosen, const std::string& verdict, double mean, double band) {
  if (verdict != "inconclusive" && chosen != Kind::zero) return chosen;
  if (mean >= band) return Kind::beyond;
  return mean > -band ? Kind::tost : Kind::upper;
}

const char* settling_name(Kind kind, bool exact) {
  switch (kind) {
    case Kind::beyond: return exact ? "sign test mean=+b" : "t-test mean=+b";
    case Kind::tost: return exact ? "sign TOST" : "TOST";
    case Kind::zero: return exact ? "sign test mean=0" : "t-test mean=0";
    case Kind::upper: return exact ? "sign non-inferiority" : "non-inferiority";
  }
  return "";
}

// seeds_for_80 of the settling test at the observed mean and sd: its power at n seeds (t-tests),
// or for identical values (the sign tests, power 1 once p < alpha) the smallest n whose exact p is
// below alpha, none where the values cannot reject.
std::optional<std::size_t> seeds_for_80(Kind kind, const MeanInterval& interval, double band,
                                        double alpha, bool exact) {
  const double mean = interval.mean, sd = interval.sd;
  if (exact) {
    const bool can = kind == Kind::beyond ? mean > band
                     : kind == Kind::tost ? std::fabs(mean) < band
                     : kind == Kind::zero ? mean != 0
                                          : mean < band;
    if (!can) return std::nullopt;
    const bool two_sided = kind == Kind::beyond || kind == Kind::zero;
    std::size_t n = 2;
    while ((two_sided ? 2 : 1) * std::pow(0.5, static_cast<double>(n)) >= alpha) ++n;
    return n;
  }
  switch (kind) {
    case Kind::beyond:
      if (mean == band) return std::nullopt;
      return seeds_for_power(
          [&](std::size_t n) { return t_test_power(mean - band, sd, n, alpha); });
    case Kind::tost:
      return seeds_for_power([&](std::size_t n) { return tost_power(mean, band, sd, n, alpha); });
    case Kind::zero: return seeds_for_power(mean, sd, alpha);
    case Kind::upper:
      return seeds_for_power(
          [&](std::size_t n) { return non_inferiority_power(mean, band, sd, n, alpha); });
  }
  return std::nullopt;
}

std::string percent(double fraction) { return format_percent(fraction); }

}  // namespace

bool NamedTest::holds_after_holm() const { return verdict != "inconclusive" && p_holm <= alpha; }

namespace {

// Which words a test may give: all, a contrast's (oriented, mean >= 0: not `better` or `not
// worse`), or only the test of mean = 0 (no band).
enum class Words { all, oriented, zero_only };

NamedTest judge(const MeanInterval& interval, double band, double alpha, Words words) {
  const bool oriented = words == Words::oriented;
  NamedTest out;
  out.alpha = alpha;
  const double df = interval.degrees_of_freedom();
  const double se = interval.standard_error();
  const double mean = interval.mean;
  out.estimate = mean;
  out.mde80 = minimum_detectable_effect(interval.n, interval.sd, alpha);
  // Identical values (se 0): the t statistics are infinite, so each hypothesis gets its exact
  // sign test: all n values on the rejecting side has probability at most 0.5^n under it.
  const bool exact = !(se > 0);
  const double one_sided = std::pow(0.5, static_cast<double>(interval.n));
  // The upper tail of (x / se), or under the sign test the one-sided p of all values above x.
  const auto tail = [&](double x) {
    return exact ? (x > 0 ? one_sided : 1.0) : student_t_upper_tail(x / se, df);
  };
  const double p_beyond = std::min(1.0, 2 * tail(mean - band));
  const double p_zero = std::min(1.0, 2 * tail(std::fabs(mean)));
  const double p_upper = tail(band - mean);  // H0: mean >= +b
  const double p_lower = tail(mean + band);  // H0: mean <= -b
  const double p_tost = std::max(p_upper, p_lower);
  const Candidate beyond{exact ? "sign test mean=+b" : "t-test mean=+b", p_beyond, 1 - alpha,
                         Kind::beyond};
  const Candidate tost{exact ? "sign TOST" : "TOST", p_tost, 1 - 2 * alpha, Kind::tost};
  const Candidate zero{exact ? "sign test mean=0" : "t-test mean=0", p_zero, 1 - alpha, Kind::zero};
  const Candidate upper{exact ? "sign non-inferiority" : "non-inferiority", p_upper, 1 - 2 * alpha,
                        Kind::upper};
  Candidate chosen = upper;
  if (words == Words::zero_only) {
    out.verdict = p_zero < alpha ? (mean > 0 ? "worse" : "better") : "inconclusive";
    chosen = zero;
  } else if (mean > band && p_beyond < alpha) {
    out.verdict = "worse beyond band";
    chosen = beyond;
  } else if (p_tost < alpha) {
    out.verdict = "equivalent";
    chosen = tost;
  } else if (p_zero < alpha && (!oriented || mean > 0)) {
    out.verdict = mean > 0 ? "worse" : "better";
    chosen = zero;
  } else if (p_upper < alpha && !oriented) {
    out.verdict = "not worse";
    chosen = upper;
  } else {
    out.verdict = "inconclusive";
    if (oriented) chosen = tost;  // mean >= 0: TOST's p is the non-inferiority p
    for (const Candidate& c : {beyond, tost, zero}) {
      if (c.p < chosen.p) chosen = c;
    }
  }
  out.test = chosen.test;
  out.p_raw = chosen.p;
  const Kind settling = settling_kind(chosen.kind, out.verdict, mean, band);
  out.power_test = settling_name(settling, exact);
  out.seeds_for_80 = seeds_for_80(settling, interval, band, alpha, exact);
  out.ci_level = chosen.level;
  const double half = interval.half_width_at(chosen.level);
  out.ci_low = mean - half;
  out.ci_high = mean + half;
  return out;
}

}  // namespace

NamedTest named_test(const MeanInterval& interval, double band, double alpha) {
  return judge(interval, band, alpha, Words::all);
}

NamedTest difference_test(const MeanInterval& interval, double alpha) {
  return judge(interval, 0, alpha, Words::zero_only);
}

NamedTest oriented_named_test(const MeanInterval& interval, double band, double alpha) {
  if (interval.mean < 0) {
    throw std::invalid_argument("oriented_named_test: the mean " +
                                format_number(interval.mean, "%.3g") +
                                " is negative; orient the contrast first");
  }
  return judge(interval, band, alpha, Words::oriented);
}

std::vector<double> holm_adjusted(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t j = 0; j < m; ++j) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - j) * p[order[j]]));
    adjusted[order[j]] = running;
  }
  return adjusted;
}

std::vector<std::string> named_test_legend(double band, double alpha) {
  const std::string b = percent(band), a = format_number(alpha, "%.3g");
  const std::string two = format_number(100 * (1 - alpha), "%.3g") + "%";
  const std::string tost = format_number(100 * (1 - 2 * alpha), "%.3g") + "%";
  return {
      "Each verdict is a named test on the mean paired difference d over seeds (Student t, n - 1 "
      "degrees of freedom), at alpha " +
          a + " and band b = " + b + "; when several hold, the first below names it.",
      "worse beyond band: two-sided t-test of mean = +b rejects, mean > b (the " + two +
          " interval lies above +" + b + "); p = its two-sided p.",
      "equivalent: TOST, both one-sided tests of mean <= -b and mean >= +b reject (the " + tost +
          " interval lies inside ±" + b + "); p = the larger of the two one-sided p.",
      "worse / better: two-sided t-test of mean = 0 rejects (the " + two +
          " interval lies above / below 0); p = its two-sided p.",
      "not worse: one-sided test of mean >= +b rejects, and not equivalent (the one-sided " +
          format_number(100 * (1 - alpha), "%.3g") + "% upper bound, the " + tost +
          " interval's upper end, is below +" + b + "); p = its one-sided p.",
      "inconclusive: none of these; the test shown is the one closest to rejecting.",
      "A contrast between two recipes is oriented so that d >= 0: its words are worse beyond "
      "band, equivalent, worse or inconclusive, never better or not worse.",
      "Identical values (sd 0, e.g. every seed's edge shift at the same grid point): the t "
      "statistics are infinite, so each test above is the exact sign test of its hypothesis "
      "(sign TOST, ...): p = 0.5^n one-sided, 2 x 0.5^n two-sided (all n values on one side), "
      "with the same words in the same order; the interval is [d, d].",
      "Multiplicity: Holm-Bonferroni over the report's family (every verdict, contrast and "
      "learning-rate edge shift that has a test; the hypotheses a sweep pre-registers form a "
      "confirmatory family of their "
      "own, every other row is exploratory): p raw and p Holm side by side, with the family "
      "size; a verdict whose p Holm exceeds alpha says so.",
      "Power: mde80 = the smallest |mean| that the two-sided t-test of mean = 0 detects with 80% "
      "power at the row's n, sd and alpha (exact noncentral t; mean > b is detected from b + "
      "mde80); seeds_for_80 = the seeds the row's settling test at the band needs for 80% power "
      "at the observed mean and sd: the verdict's own test for equivalent (TOST), not worse (the "
      "one-sided test against +b) and worse beyond band (the test of mean = +b); for worse, "
      "better and inconclusive the test at the band that can settle the row at its mean (TOST "
      "inside the band, the one-sided test against +b below -b, the test of mean = +b from +b "
      "up), never the test of mean = 0 (noncentral t; TOST exact, integrated over the sd's "
      "distribution; a sign test: the seeds that bring its p below alpha).",
      "Rows whose seeds were planned from a pilot (seeds: auto) are tested once on all their "
      "seeds by Stein's two-stage test: the mean of all seeds, the sd and degrees of freedom of "
      "the pilot's 3 (exact level whatever the plan chose)."};
}

int paired_verdict_rank(const std::string& verdict) {
  static const std::vector<std::string> order = {"better",       "equivalent", "not worse",
                                                 "inconclusive", "worse",      "worse beyond band",
                                                 "failed",       "unstable"};
  const auto it = std::find(order.begin(), order.end(), verdict);
  return static_cast<int>(it - order.begin());  // diverged (and anything else) last
}

TestCells test_cells(const std::optional<NamedTest>& t) {
  if (!t) return {"-", "-", "-", "-", "-"};
  return {t->test + ", " + format_number(100 * t->ci_level, "%.3g") + "% CI [" +
              signed_percent(t->ci_low) + ", " + signed_percent(t->ci_high) + "]",
          format_number(t->p_raw, "%.2g"),
          format_number(t->p_holm, "%.2g") + " (" + t->family + ", " +
              std::to_string(t->family_size) + ")",
          format_percent(t->mde80),
          t->seeds_for_80 ? std::to_string(*t->seeds_for_80) : std::string("over 100000")};
}

std::string describe_p_values(const NamedTest& t) {
  return "p " + format_number(t.p_raw, "%.2g") + ", Holm " + format_number(t.p_holm, "%.2g") +
         " (" + t.family + " family of " + std::to_string(t.family_size) + ")";
}

std::string holm_note(const NamedTest& t) {
  if (t.verdict == "inconclusive" || t.holds_after_holm()) return "";
  return "p Holm " + format_number(t.p_holm, "%.2g") + " > alpha " +
         format_number(t.alpha, "%.3g") + ": not significant after the correction for its " +
         t.family + " family of " + std::to_string(t.family_size);
}

std::string verdict_with_reasons(const std::string& verdict, const std::string& reason,
                                 const std::optional<NamedTest>& test) {
  std::string reasons = reason;
  if (test) {
    const auto note = holm_note(*test);
    reasons += (reasons.empty() || note.empty() ? "" : "; ") + note;
  }
  return reasons.empty() ? verdict : verdict + " (" + reasons + ")";
}

}  // namespace fp8lab::experiments
