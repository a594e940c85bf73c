// The probe statistics (issue 41 items 3 and 4), on synthetic series and rows:
// - batch means (batch_means.hpp): on AR(1) series with phi 0.8 the 95% interval covers the true
//   mean near 95% (within the Monte Carlo tolerance), an iid interval clearly less;
// - pairs (probe_pairs.hpp): a recipe whose error is larger at every step is "worse" after Holm,
//   a pair that differs by noise only is inconclusive, and a direction is shown only after Holm;
// - a stochastic recipe's mean-of-draws bias (probe_summary.hpp) has an interval holding 0 when
//   its draws are unbiased, and its spread is reported beside it;
// - Spearman and "Does it predict?" (rank_prediction.hpp): a monotone relation gives rho 1, few
//   recipes or an interval holding 0 say "Cannot tell".
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "experiments/stats/batch_means.hpp"
#include "experiments/stats/probe_pairs.hpp"
#include "experiments/stats/probe_summary.hpp"
#include "experiments/stats/rank_prediction.hpp"

using namespace fp8lab::experiments;

namespace {

// AR(1) x_t = phi x_{t-1} + e_t, stationary start, true mean 0.
std::vector<double> ar1(std::mt19937_64& generator, std::size_t n, double phi) {
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  x[0] = normal(generator) / std::sqrt(1 - phi * phi);
  for (std::size_t t = 1; t < n; ++t) x[t] = phi * x[t - 1] + normal(generator);
  return x;
}

ProbeRow model_row(const std::string& recipe, std::int64_t step, double rel_error) {
  ProbeRow row = probe_row(step, kOnBaseline, recipe, kAllGemms, 0, kWholeModel);
  row.rel_error = rel_error;
  row.bias = -rel_error / 2;
  row.update_rel_error = 2 * rel_error;
  return row;
}

}  // namespace

TEST_CASE("batch means cover an autocorrelated series' mean at its level; iid does not",
          "[report][probes]") {
  // phi 0.8: autocorrelation time (1 + phi) / (1 - phi) = 9 steps; 1000 points give 10 batches
  // of 100. Monte Carlo: 2000 replicates, sd of a 95% coverage sqrt(0.95 0.05 / 2000) = 0.0049;
  // the tolerance is 3 of those. Batch means' own bias at this batch length (the variance of a
  // 100-point batch mean is 96% of its asymptote) is inside it.
  constexpr std::size_t kReplicates = 2000, kPoints = 1000;
  const double tolerance = 3 * std::sqrt(0.95 * 0.05 / kReplicates);
  std::mt19937_64 generator(20260541);
  std::size_t covered = 0, naive_covered = 0;
  for (std::size_t r = 0; r < kReplicates; ++r) {
    const auto x = ar1(generator, kPoints, 0.8);
    const auto batches = batch_means_interval(x);
    REQUIRE(batches);
    REQUIRE(batches->n == kBatches);
    covered += batches->low() <= 0 && 0 <= batches->high();
    const auto naive = t_interval(x);
    naive_covered += naive->low() <= 0 && 0 <= naive->high();
  }
  const double coverage = static_cast<double>(covered) / kReplicates;
  const double naive_coverage = static_cast<double>(naive_covered) / kReplicates;
  INFO("batch means coverage " << coverage << ", iid coverage " << naive_coverage << ", tolerance "
                               << tolerance);
  CHECK(std::fabs(coverage - 0.95) <= tolerance);
  // iid: its standard error is 1/3 of the truth here (variance ratio 1/9), coverage about 50%.
  CHECK(naive_coverage < 0.70);
}

TEST_CASE("batch means: too short a series has no interval, the remainder is dropped first",
          "[report][probes]") {
  CHECK_FALSE(batch_means_interval(std::vector<double>{1, 2, 3, 4, 5}));
  // 23 points: 10 batches of 2, the first 3 points dropped.
  std::vector<double> x(23, 1.0);
  x[0] = x[1] = x[2] = 1000.0;
  const auto interval = batch_means_interval(x);
  REQUIRE(interval);
  CHECK(interval->n == 10);
  CHECK(interval->mean == 1.0);
  CHECK(interval->half_width == 0.0);
}

TEST_CASE("probe pairs: a resolved difference after Holm, noise inconclusive", "[report][probes]") {
  std::mt19937_64 generator(7);
  std::normal_distribution<double> noise(0.0, 0.002);
  ProbeTrajectory t{"baseline-0", {}};
  for (std::int64_t step = 0; step < 300; step += 10) {
    const double shared = 0.05 + 0.01 * std::sin(static_cast<double>(step) / 40);
    t.rows.push_back(model_row("e5m2", step, shared + 0.02 + noise(generator)));
    t.rows.push_back(model_row("e4m3", step, shared + noise(generator)));
    t.rows.push_back(model_row("e4m3 twin", step, shared + noise(generator)));
  }
  const auto pairs = probe_pairs({t}, 0.05);
  REQUIRE(pairs.size() == 9);  // 3 pairs x 3 metrics
  for (const auto& pair : pairs) {
    INFO(pair.metric << ": " << pair.a << " - " << pair.b << " = " << pair.test.estimate << " ["
                     << pair.test.ci_low << ", " << pair.test.ci_high << "], p " << pair.test.p_raw
                     << ", Holm " << pair.test.p_holm);
    CHECK(pair.steps == 30);
    CHECK(pair.test.family_size == 9);
    CHECK(pair.test.p_holm >= pair.test.p_raw);
    if (pair.a == "e4m3" && pair.b == "e4m3 twin") {
      CHECK(pair.shown() == "inconclusive");
    } else {
      // Recipes sort by name: e4m3 < e4m3 twin < e5m2, so e5m2 is always b: a is better.
      CHECK(pair.b == "e5m2");
      CHECK(pair.shown() == "better");
    }
  }
  // A direction that does not hold after Holm is not shown.
  auto pair = pairs.front();
  pair.test.verdict = "worse";
  pair.test.p_holm = 0.2;
  CHECK(pair.shown() == "inconclusive");
}

TEST_CASE("Spearman's rho and whether it can tell", "[report][probes]") {
  const std::vector<double> probe{0.01, 0.02, 0.05, 0.1, 0.3, 0.8};
  const std::vector<double> loss{0.0001, 0.0003, 0.0004, 0.002, 0.01, 0.05};  // monotone
  const auto perfect = rank_prediction(probe, loss);
  REQUIRE(perfect.rho);
  CHECK(*perfect.rho == Approx(1.0));
  CHECK(perfect.ci_low == Approx(1.0));
  CHECK(perfect.can_tell);
  INFO(perfect.sentence);
  CHECK(perfect.sentence.find("larger end-of-run loss error") != std::string::npos);
  // Reversed: rho -1.
  const std::vector<double> reversed(loss.rbegin(), loss.rend());
  CHECK(*spearman(probe, reversed) == Approx(-1.0));
  // Ties take average ranks: x ranks 1.5 1.5 3 against 1 2 3.
  CHECK(*spearman({1, 1, 2}, {1, 2, 3}) == Approx(0.8660254));
  CHECK_FALSE(spearman({1, 1, 1}, {1, 2, 3}));
  // Four recipes, however monotone: cannot tell.
  const auto few = rank_prediction({0.1, 0.2, 0.3, 0.4}, {1, 2, 3, 4});
  CHECK_FALSE(few.can_tell);
  CHECK(few.sentence.rfind("Cannot tell", 0) == 0);
  CHECK(few.sentence.find("at least 5") != std::string::npos);
  // Unrelated ranks: the interval holds 0.
  const auto unrelated = rank_prediction({1, 2, 3, 4, 5, 6, 7, 8}, {3, 8, 1, 6, 2, 7, 4, 5});
  INFO(unrelated.sentence);
  CHECK(unrelated.ci_low < 0);
  CHECK(unrelated.ci_high > 0);
  CHECK_FALSE(unrelated.can_tell);
  CHECK(unrelated.sentence.find("contains 0") != std::string::npos);
}

TEST_CASE("a stochastic recipe: its mean-of-draws bias holds 0, its spread is reported",
          "[report][probes]") {
  std::mt19937_64 generator(3);
  std::normal_distribution<double> unbiased(0.0, 0.004);
  ProbeTrajectory t{"baseline-0", {}};
  for (std::int64_t step = 0; step < 400; step += 10) {
    for (std::int64_t draw = 0; draw < 4; ++draw) {
      auto row = model_row("sr", step, 0.1);
      row.draw = draw;
      t.rows.push_back(row);
    }
    auto mean = model_row("sr", step, 0.05);
    mean.draw = kMeanOfDraws;
    mean.bias = unbiased(generator);  // the mean gradient's bias: noise around 0
    mean.draw_spread = 0.08;
    t.rows.push_back(mean);
    t.rows.push_back(model_row("rtn", step, 0.1));  // bias -0.05 at every step, no draws
  }
  const auto summaries = probe_summaries({t}, kOnBaseline);
  REQUIRE(summaries.size() == 2);
  const auto& rtn = summaries[0];
  const auto& sr = summaries[1];
  REQUIRE(sr.recipe == "sr");
  REQUIRE(sr.mean_of_draws_bias);
  REQUIRE(sr.mean_of_draws_bias->interval);
  const auto& bias = *sr.mean_of_draws_bias->interval;
  INFO("sr mean-of-draws bias " << bias.mean << " [" << bias.low() << ", " << bias.high() << "]");
  CHECK(bias.low() < 0);
  CHECK(bias.high() > 0);
  REQUIRE(sr.draw_spread);
  CHECK(sr.draw_spread->mean == Approx(0.08));
  // Its table value is the draws' own (rel_error 0.1 each), not the mean gradient's 0.05.
  CHECK(sr.metrics[1]->mean == Approx(0.1));
  // A deterministic recipe has neither.
  CHECK(rtn.recipe == "rtn");
  CHECK_FALSE(rtn.mean_of_draws_bias);
  CHECK_FALSE(rtn.draw_spread);
  CHECK(rtn.metrics[2]->mean == Approx(-0.05));
}
