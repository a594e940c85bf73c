// Paired verdicts (issue 20 §2, issue 31) on hand-made records, no training: the t-interval, the
// named tests against the practical band (a consistent +0.5% under a 3% seed-to-seed spread is
// worse beyond the band; pure noise is inconclusive), the seeds 80% power would need, contrasts
// between recipes on the same seeds, the chaos floor of null runs, the eval set's paired and unpaired sampling error, the
// short peer marks, and the sweep's practical_band.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "experiments/render/markdown_report.hpp"
#include "experiments/render/summary_csv.hpp"
#include "experiments/stats/chaos_floor.hpp"
#include "experiments/stats/contrasts.hpp"
#include "experiments/stats/eval_sampling_error.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/paired_statistics.hpp"
#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/run_provenance.hpp"
#include "recipes/error.hpp"
#include "recipes/sweep.hpp"
#include "tests/experiments/report_test_support.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

using testing::baseline_record;
using testing::fp8_record;
using testing::html_of;
using testing::markdown_of;
using testing::report_input_of;
using testing::typed;

// Baselines of seeds 0..n-1 whose final eval losses spread by about 3% between seeds.
double baseline_loss(int seed) { return 2.0 * (1.0 + 0.03 * ((seed * 7) % 5 - 2) / 2.0); }

// An FP8 run on `seed` whose eval loss is (1 + rel) x its baseline's on every eval point.
nlohmann::json paired_record(const std::string& format, int seed, double rel) {
  const double base = baseline_loss(seed);
  auto r = fp8_record(format + "-s" + std::to_string(seed), format, 0, base * (1 + rel), "finished",
                      seed);
  r["eval"] = nlohmann::json::array();
  for (int step = 0; step <= 10; ++step) {
    const double b = 4.0 - (4.0 - base) * step / 10.0;
    r["eval"].push_back({{"step", step}, {"loss", b * (1 + rel)}, {"rel_diff", rel}});
  }
  r["final"]["baseline_eval_loss"] = base;
  r["final"]["eval_rel_diff"] = rel;
  return r;
}

std::vector<nlohmann::json> baselines(int seeds) {
  std::vector<nlohmann::json> out;
  for (int s = 0; s < seeds; ++s) out.push_back(baseline_record(s, baseline_loss(s)));
  return out;
}

// The records of `kind`; they point into `records`, which must outlive them.
std::vector<const RunRecord*> pointers(const std::vector<RunRecord>& records,
                                       const std::string& kind = "fp8") {
  std::vector<const RunRecord*> out;
  for (const auto& r : records) {
    if (r.kind == kind) out.push_back(&r);
  }
  return out;
}

}  // namespace

TEST_CASE("The t-interval: mean, sd and the 95% half-width from Boost.Math's t",
          "[report][paired]") {
  const std::vector<double> values = {1.0, 2.0, 3.0};
  const auto i = t_interval(values);
  REQUIRE(i);
  CHECK(i->mean == 2.0);
  CHECK(i->sd == Approx(1.0));
  CHECK(i->half_width == Approx(4.302652730 / std::sqrt(3.0)));  // t_0.975(2) = 4.302652730
  CHECK(i->half_width_at(0.90) == Approx(2.919985580 / std::sqrt(3.0)));  // t_0.95(2)
  CHECK_FALSE(t_interval(std::vector<double>{1.0}));
}

TEST_CASE("A consistent +0.5% under a 3% spread between seeds is worse beyond the band; pure "
          "noise is inconclusive",
          "[report][paired]") {
  auto records = baselines(3);
  // +0.5% on every seed, give or take 0.02%, while the baselines differ by 3% between seeds.
  for (int s = 0; s < 3; ++s) records.push_back(paired_record("E5M2", s, 0.005 + 0.0002 * (s - 1)));
  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  REQUIRE(floors.all().front()->floor);
  CHECK(*floors.all().front()->floor >= 0.03);  // the unpaired rule would call it noise
  const auto verdict = paired_verdict(pointers(typed(records)), kDefaultPracticalBand);
  CHECK(verdict.verdict == "worse beyond band");
  REQUIRE(verdict.tail);
  REQUIRE(verdict.test);
  CHECK(verdict.test->test == "t-test mean=+b");
  CHECK(verdict.test->ci_level == Approx(0.95));
  CHECK(verdict.test->ci_low > kDefaultPracticalBand);
  CHECK(verdict.test->p_raw < kDefaultAlpha);
  CHECK(verdict.tail->mean == Approx(0.005));

  // Pure noise: the paired errors of gpt-small's TE default recipe (issue 20: +1.85%, -1.08%,
  // -3.96% on seeds 0, 1, 2).
  auto noisy = baselines(3);
  const double errors[] = {0.0185, -0.0108, -0.0396};
  for (int s = 0; s < 3; ++s) noisy.push_back(paired_record("HYBRID", s, errors[s]));
  const auto noise = paired_verdict(pointers(typed(noisy)), kDefaultPracticalBand);
  CHECK(noise.verdict == "inconclusive");
  // The test shown (the closest to rejecting) and its own power: the one-sided test against +b.
  REQUIRE(noise.test);
  CHECK(noise.test->test == "non-inferiority");
  CHECK_THAT(noise.reason, Catch::StartsWith("80% power for its settling test (non-inferiority) at "
                                             "a mean "
                                             "of -1.06% and this spread needs "));
  // A mean of -1.06% under a 2.9% spread: far more seeds than 3 for 80% power.
  const auto needed = seeds_for_power([&](std::size_t n) {
    return non_inferiority_power(noise.tail->mean, kDefaultPracticalBand, noise.tail->sd, n,
                                 kDefaultAlpha);
  });
  REQUIRE(needed);
  CHECK(*needed > 20);
  CHECK_THAT(noise.reason, Catch::EndsWith(" needs " + std::to_string(*needed) + " seeds"));
}

TEST_CASE("Paired verdicts: equivalent, too few seeds, diverged and failed", "[report][paired]") {
  auto records = baselines(3);
  for (int s = 0; s < 3; ++s) records.push_back(paired_record("E4M3", s, 0.0001 * s));
  CHECK(paired_verdict(pointers(typed(records)), kDefaultPracticalBand).verdict == "equivalent");

  auto two = baselines(2);
  for (int s = 0; s < 2; ++s) two.push_back(paired_record("E4M3", s, 0.01));
  const auto few = paired_verdict(pointers(typed(two)), kDefaultPracticalBand);
  CHECK(few.verdict == "inconclusive");
  CHECK(few.reason == "2 seeds with a paired error; a test needs 3");
  CHECK_FALSE(few.test);

  auto broken = baselines(3);
  for (int s = 0; s < 3; ++s) broken.push_back(paired_record("E4M3", s, 0.0));
  broken.back()["status"] = "diverged";
  CHECK(paired_verdict(pointers(typed(broken)), kDefaultPracticalBand).reason ==
        "1 of 3 seeds diverged");
  broken.back()["status"] = "failed";
  CHECK(paired_verdict(pointers(typed(broken)), kDefaultPracticalBand).verdict == "failed");

  // A run whose loss barely fell did not train: failed, whatever its interval says.
  std::vector<nlohmann::json> untrained = baselines(3);
  for (int s = 0; s < 3; ++s) {
    const auto id = std::string("u").append(std::to_string(s));
    untrained.push_back(fp8_record(id, "E4M3", 40, 3.8, "finished", s));
  }
  CHECK(paired_verdict(pointers(typed(untrained)), kDefaultPracticalBand).verdict == "failed");
}

TEST_CASE("The evals a verdict reads are the first and the tail's", "[report][paired]") {
  const auto read = [](std::size_t points) {
    std::vector<std::size_t> indices;
    for (std::size_t i = 0; i < points; ++i) {
      if (eval_enters_verdicts(i, points)) indices.push_back(i);
    }
    return indices;
  };
  CHECK(read(1) == std::vector<std::size_t>{0});
  CHECK(read(2) == std::vector<std::size_t>{0, 1});
  CHECK(read(10) == std::vector<std::size_t>{0, 9});
  CHECK(read(11) == std::vector<std::size_t>{0, 9, 10});  // the default sweep: steps 0, 270, 299
  CHECK(read(41) == std::vector<std::size_t>{0, 36, 37, 38, 39, 40});
}

TEST_CASE("The tail is the mean over the last 10% of eval points", "[report][paired]") {
  CHECK(tail_points(0) == 0);
  CHECK(tail_points(2) == 1);
  CHECK(tail_points(10) == 1);
  CHECK(tail_points(11) == 2);
  CHECK(tail_points(41) == 5);
  auto r = paired_record("E4M3", 0, 0.0);
  for (std::size_t i = 0; i < r["eval"].size(); ++i) {
    r["eval"][i]["rel_diff"] = 0.001 * static_cast<double>(i);
  }
  // 11 points: the last 2 (0.009, 0.010).
  CHECK(*tail_rel_error(typed(r)) == Approx(0.0095));
  CHECK(*final_rel_error(typed(r)) == 0.0);  // /final/eval_rel_diff as recorded
}

TEST_CASE("Contrasts between recipes on the same seeds resolve what the baseline cannot",
          "[report][paired]") {
  // Both recipes wander +-3% from the baseline, but E5M2 is 0.3% above E4M3 on every seed.
  auto records = baselines(3);
  const double wander[] = {0.0185, -0.0108, -0.0396};
  for (int s = 0; s < 3; ++s) {
    records.push_back(paired_record("E4M3", s, wander[s]));
    records.push_back(paired_record("E5M2", s, (1 + wander[s]) * 1.003 - 1));
  }
  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  const auto rows = ranked_recipe_rows(typed_records, floors);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].verdict == "inconclusive");
  CHECK(rows[1].verdict == "inconclusive");
  const auto contrasts = recipe_contrasts(rows, kDefaultPracticalBand);
  REQUIRE(contrasts.size() == 1);
  const auto& c = contrasts.front();
  CHECK(c.field == "fp8_format");
  CHECK(c.worse_value == "E5M2");
  CHECK(c.better_value == "E4M3");
  // +0.3% on every seed (to rounding): beyond the 0.25% band.
  CHECK(c.verdict == "worse beyond band");
  REQUIRE(c.interval);
  CHECK(c.interval->mean == Approx(0.003).epsilon(1e-6));
  const auto resolution = sweep_resolution(rows, contrasts, kDefaultAlpha);
  REQUIRE(resolution.size() == 1);
  CHECK(resolution[0].rows_resolved == 0);
  CHECK(resolution[0].contrasts_resolved == 1);
  REQUIRE(resolution[0].vs_baseline);
  REQUIRE(resolution[0].contrast);
  CHECK(*resolution[0].contrast < *resolution[0].vs_baseline);

  const auto md = markdown_of(records);
  CHECK_THAT(md, Catch::Contains("| fp8_format | E5M2 | E4M3 | E4M3 m0 | 3 | +0.3% ["));
  CHECK_THAT(md, Catch::Contains("| worse beyond band | t-test mean=+b, 95% CI ["));
  CHECK_THAT(md, Catch::Contains("0 of 2 recipe rows and 1 of 1 contrasts reach a verdict other "
                                 "than inconclusive that holds after Holm (0 and 1 at raw alpha)"));
}

TEST_CASE("Null runs measure the chaos floor shown beside each verdict", "[report][paired]") {
  auto records = baselines(3);
  const double wander[] = {0.012, -0.004, -0.02};
  for (int s = 0; s < 3; ++s) {
    auto n = paired_record("null", s, wander[s]);
    n["kind"] = "null";
    n["run_id"] = std::string("null-").append(testing::baseline_id(s));
    n["perturbation"] = "initial weights rounded once to bf16";
    for (const char* k : {"recipe", "recipe_fields", "recipe_canonical"}) n.erase(k);
    records.push_back(n);
    records.push_back(paired_record("E4M3", s, wander[s] * 0.9));
  }
  const ChaosFloors chaos(typed(records));
  REQUIRE(chaos.all().size() == 1);
  const auto* floor = chaos.all().front();
  CHECK(floor->seeds == std::vector<std::int64_t>{0, 1, 2});
  REQUIRE(floor->tail);
  CHECK(floor->tail->mean == Approx((0.012 - 0.004 - 0.02) / 3));
  CHECK(chaos.of(typed(records.back())) == floor);
  // Null runs are no recipe rows.
  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  CHECK(ranked_recipe_rows(typed_records, floors).size() == 1);
  const auto md = markdown_of(records);
  CHECK_THAT(md, Catch::Contains("- w: chaos floor, once null arm (paired tail error) "));
  CHECK_THAT(md, Catch::Contains("(initial weights rounded once to bf16)"));
  const auto chaos_cell = std::string("| once: sd ").append(format_percent(floor->tail->sd));
  CHECK_THAT(md, Catch::Contains(chaos_cell + " (n=3) |"));
  const auto csv = render_summary_csv(report_input_of(records));
  CHECK_THAT(csv, Catch::Contains(",verdict,mde80,seeds_for_80,unstable_runs,runs,paired_reason,"
                                  "rel_error_final,"));
}

TEST_CASE("The eval set's sampling error: paired over the same windows, and unpaired",
          "[report][paired]") {
  // d = (0.1, 0.1, 0.3, 0.1): mean 0.15, sd 0.1, SE 0.1 / 2 = 0.05, relative to the baseline's
  // mean 2.5: 2%. The baseline alone: sd sqrt(5/3) / 2 / 2.5.
  const std::vector<double> baseline = {1.0, 2.0, 3.0, 4.0};
  const std::vector<double> run = {1.1, 2.1, 3.3, 4.1};
  const auto se = window_sampling_error(run, baseline);
  REQUIRE(se);
  CHECK(se->windows == 4);
  CHECK(se->paired == Approx(0.02));
  CHECK(se->unpaired == Approx(std::sqrt(5.0 / 3.0) / 2.0 / 2.5));
  // A constant shift on every window is no sampling error at all.
  const std::vector<double> shifted = {1.5, 2.5, 3.5, 4.5};
  CHECK(window_sampling_error(shifted, baseline)->paired == Approx(0.0).margin(1e-15));
  // Different window counts, too few windows, a non-finite loss: no figure.
  CHECK_FALSE(window_sampling_error(std::vector<double>{1.0, 2.0, 3.0}, baseline));
  CHECK_FALSE(window_sampling_error(std::vector<double>{1.0}, std::vector<double>{1.0}));
  CHECK_FALSE(window_sampling_error(std::vector<double>{1.0, NAN, 3.0, 4.0}, baseline));
}

TEST_CASE("Paired eval sampling error from records: far below the unpaired one, in the report",
          "[report][paired]") {
  // 512 windows whose losses spread by 10% (the per-window spread measured on llama-xs); each
  // FP8 run's loss is its baseline's on the same window times 1.003, plus 0.5% noise per window.
  constexpr int kWindows = 512;
  auto records = baselines(3);
  std::uint64_t state = 12345;
  auto uniform = [&state] {  // splitmix64 in [-0.5, 0.5)
    state += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0 - 0.5;
  };
  for (int s = 0; s < 3; ++s) {
    std::vector<double> base(kWindows), fp8(kWindows);
    for (int i = 0; i < kWindows; ++i) {
      base[i] = baseline_loss(s) * (1 + 0.35 * uniform());  // sd about 10%
      fp8[i] = base[i] * (1.003 + 0.017 * uniform());       // noise sd about 0.5%
    }
    records[s]["final"]["eval_example_losses"] = base;
    auto r = paired_record("E4M3", s, 0.003);
    r["final"]["eval_example_losses"] = fp8;
    records.push_back(r);
  }
  const auto se = eval_sampling_error(typed(records[3]), typed(records[0]));
  REQUIRE(se);
  CHECK(se->windows == kWindows);
  // Unpaired: about 10% / sqrt(512) = 0.45%; paired: about 0.5% / sqrt(512) = 0.022%.
  CHECK(se->unpaired == Approx(0.10 / std::sqrt(512.0)).epsilon(0.15));
  CHECK(se->paired == Approx(0.005 / std::sqrt(512.0)).epsilon(0.15));
  CHECK(se->paired < se->unpaired / 10);
  // Runs of different lengths did not evaluate the same weights' losses.
  auto longer = records[3];
  longer["steps_completed"] = 20;
  CHECK_FALSE(eval_sampling_error(typed(longer), typed(records[0])));
  auto no_windows = records[0];
  no_windows["final"].erase("eval_example_losses");
  CHECK_FALSE(eval_sampling_error(typed(records[3]), typed(no_windows)));

  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  const auto rows = ranked_recipe_rows(typed_records, floors);
  REQUIRE(rows.size() == 1);
  REQUIRE(rows[0].paired_eval_se);
  CHECK(*rows[0].paired_eval_se < 0.0025 / 3);
  const auto resolution = sweep_resolution(rows, {}, kDefaultAlpha);
  REQUIRE(resolution.size() == 1);
  CHECK(resolution[0].paired_eval_se == rows[0].paired_eval_se);
  CHECK_THAT(describe_eval_sampling_error(resolution[0], 0.0025),
             Catch::Contains("x below the band.") && Catch::Contains("one eval loss alone"));
  // A band tighter than three paired standard errors says the eval set is too small.
  CHECK_THAT(describe_eval_sampling_error(resolution[0], *rows[0].paired_eval_se),
             Catch::Contains("not well below the") && Catch::Contains("eval_windows"));

  const auto md = markdown_of(records);
  CHECK_THAT(md, Catch::Contains(", paired ± " + format_percent(rows[0].paired_eval_se)));
  CHECK_THAT(md, Catch::Contains("The eval set's own sampling error of one seed's paired error"));
  const auto csv = render_summary_csv(report_input_of(records));
  CHECK_THAT(csv, Catch::Contains(",eval_loss_se,paired_eval_se,"));
}

TEST_CASE("The ranked table's peer column is a short mark; the full text is a footnote",
          "[report][paired]") {
  auto records = baselines(1);
  auto refused = fp8_record("e5", "E5M2", 0, 2.0);
  testing::as_asked(refused, nlohmann::json::array(),
                    "accelerate + TE refuses these settings (fp8_format: E5M2 -> refused (TE "
                    "asserts \"Pure E5M2 training is not supported.\"; te-accelerate.md §2.1))");
  refused["upstream"]["quirks"] = {{{"field", "fp8_format"}, {"asked", "E5M2"}, {"runs", ""}}};
  auto changed = fp8_record("hy", "HYBRID", 0, 2.0);
  testing::as_asked(changed, {testing::change("amax_compute_algo", "most_recent", "max", "why"),
                              testing::change("margin", "0", "1", "why")});
  records.push_back(refused);
  records.push_back(changed);
  CHECK(short_upstream_mark(typed(refused)) == "TE refuses (E5M2)");
  CHECK(short_upstream_mark(typed(changed)) == "TE changes 2 fields");
  const auto md = markdown_of(records);
  CHECK_THAT(md, Catch::Contains("| **TE refuses (E5M2)** ["));
  CHECK_THAT(md, Catch::Contains("] accelerate + TE refuses these settings (fp8_format: E5M2"));
  // One readable line: no row of the ranked table carries the quirk text.
  const auto table = md.substr(md.find("## Recipes ranked"));
  const auto row = table.substr(table.find("| 1 |"));
  CHECK(row.substr(0, row.find('\n')).find("Pure E5M2") == std::string::npos);
}

TEST_CASE("A sweep's practical_band is a fraction in (0, 1); 0.25% by default",
          "[report][paired]") {
  const testing::Scratch dir("band");
  const auto write = [&](const std::string& band) {
    const auto path = dir / "s.yaml";
    testing::write_text(path, std::string("workloads: [mlp]\nseeds: [0]\n")
                                  .append(band)
                                  .append("parameters:\n  margin: {values: [0]}\n"));
    return recipes::read_sweep(path.string());
  };
  CHECK(write("").practical_band == 0.0025);
  CHECK(write("").null_runs.empty());
  CHECK(write("practical_band: 0.01\nnull_runs: true\n").practical_band == 0.01);
  CHECK(write("null_runs: true\n").null_runs.size() == 1);
  CHECK_THROWS_WITH(write("practical_band: 2\n"),
                    Catch::Contains("practical_band") && Catch::Contains("a fraction in (0, 1)"));
  CHECK_THROWS_WITH(write("practical_band: wide\n"), Catch::Contains("expected a number"));
}

}  // namespace fp8lab::experiments
