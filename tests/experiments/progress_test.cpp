// The sweep's progress (experiments/sweep/progress.hpp): durations, the ETA, how a finished run
// reads from its record, and both forms, the redrawn terminal line and one line per finished run
// for logs (Slurm, nohup, CI).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "experiments/sweep/progress.hpp"

namespace fp8lab::experiments {
namespace {

// What `out` received since it was opened.
std::string contents(std::FILE* out) {
  std::fflush(out);
  std::rewind(out);
  std::string text;
  for (int c = std::fgetc(out); c != EOF; c = std::fgetc(out)) text.push_back(static_cast<char>(c));
  return text;
}

// How a run ended, from a record given as JSON.
std::string outcome(const nlohmann::json& json, double seconds) {
  const auto record = run_record_from_json(json);
  return ProgressLine::outcome_text(&record, seconds);
}

}  // namespace

TEST_CASE("Durations and the ETA", "[progress]") {
  CHECK(ProgressLine::format_duration(0) == "0s");
  CHECK(ProgressLine::format_duration(31.4) == "31s");
  CHECK(ProgressLine::format_duration(59.6) == "1m00s");
  CHECK(ProgressLine::format_duration(307) == "5m07s");
  CHECK(ProgressLine::format_duration(3720) == "1h02m");
  CHECK(ProgressLine::format_duration(NAN) == "?");
  CHECK(ProgressLine::format_duration(-1) == "?");
  // 3 of 12 runs in 60 s: 20 s a run (parallel jobs included), 9 left.
  CHECK(ProgressLine::remaining_seconds(60, 3, 12) == 180);
  CHECK(ProgressLine::remaining_seconds(60, 12, 12) == 0);
  CHECK(std::isnan(ProgressLine::remaining_seconds(60, 0, 12)));
}

TEST_CASE("A finished run's line says what ran, how it ended, what is left", "[progress]") {
  const auto fp8 =
      run_record_from_json({{"kind", "fp8"},
                            {"status", "finished"},
                            {"recipe_label", "delayed E4M3 m0 h16 max"},
                            {"final", {{"eval_rel_diff", 0.0042}, {"eval_loss", 2.5}}}});
  // 12 of 40 in 180 s: 15 s a run, 28 left = 7m00s.
  CHECK(ProgressLine::finished_line(12, 40, "3f2a09c1d4e5b6a7", &fp8, 31, 2, 180) ==
        "[12/40] 3f2a09c1d4e5b6a7 delayed E4M3 m0 h16 max finished in 31s (eval rel diff "
        "+0.42%) | 2 running, ETA 7m00s");
  const auto baseline = run_record_from_json(
      {{"kind", "baseline"}, {"status", "finished"}, {"final", {{"eval_loss", 2.31234}}}});
  CHECK(ProgressLine::finished_line(1, 40, "baseline-mlp-seed0-fp32", &baseline, 12, 1, 12) ==
        "[1/40] baseline-mlp-seed0-fp32 baseline finished in 12s (eval loss 2.312) | 1 running, "
        "ETA 7m48s");
  CHECK(ProgressLine::finished_line(40, 40, "x", &fp8, 31, 0, 3725) ==
        "[40/40] x delayed E4M3 m0 h16 max finished in 31s (eval rel diff +0.42%) | all done in "
        "1h02m");

  CHECK(outcome({{"status", "diverged"}, {"diverged_at_step", 12}}, 5) ==
        "diverged at step 12 in 5s");
  CHECK(outcome({{"status", "failed"}, {"error", "the run's process was killed by signal 9\nlog"}},
                2) == "failed in 2s (the run's process was killed by signal 9)");
  CHECK(outcome({{"status", "failed"}, {"error", std::string(300, 'e')}}, 2) ==
        "failed in 2s (" + std::string(117, 'e') + "...)");
  CHECK(outcome({{"status", "failed"}, {"error", nullptr}}, 2) == "failed in 2s (no message)");
  CHECK(ProgressLine::outcome_text(nullptr, 3) == "ended in 3s without a record");
  CHECK(outcome({{"status", "finished"}}, NAN) == "finished in ?");
}

TEST_CASE("One line per finished run, flushed, for logs; one redrawn line on a terminal",
          "[progress]") {
  const auto a =
      run_record_from_json(nlohmann::json::parse(R"({"kind":"fp8","status":"finished",)"
                                                 R"("recipe_label":"current E4M3",)"
                                                 R"("final":{"eval_rel_diff":-0.015}})"));

  std::FILE* log = std::tmpfile();
  REQUIRE(log != nullptr);
  ProgressLine lines(2, ProgressLine::Form::one_line_per_run, log);
  lines.started("a", 0, 1);
  lines.started("b", 0, 2);
  CHECK(contents(log).empty());  // nothing until a run ends
  lines.finished("a", &a, 1, 1);
  const std::string first = contents(log);
  CHECK_THAT(first, Catch::StartsWith("[1/2] a current E4M3 finished in 0s (eval rel diff -1.50%) "
                                      "| 1 running, ETA ") &&
                        Catch::EndsWith("\n"));
  lines.finished("b", nullptr, 2, 0);  // no record
  lines.finish();
  const std::string both = contents(log);
  CHECK_THAT(both, Catch::EndsWith("[2/2] b ended in 0s without a record | all done in 0s\n"));
  CHECK(both.find('\r') == std::string::npos);
  std::fclose(log);

  std::FILE* terminal = std::tmpfile();
  REQUIRE(terminal != nullptr);
  ProgressLine redrawn(2, ProgressLine::Form::redrawn, terminal);
  redrawn.started("a", 0, 1);
  redrawn.finished("a", &a, 1, 0);
  const std::string drawn = contents(terminal);
  CHECK_THAT(drawn, Catch::StartsWith("\r[0/2 runs] 1 running, 0s elapsed, ETA ?") &&
                        Catch::Contains("\r[1/2 runs] 0 running, 0s elapsed, ETA 0s"));
  CHECK(drawn.find('\n') == std::string::npos);
  redrawn.finish();
  CHECK_THAT(contents(terminal), Catch::EndsWith("\n"));
  std::fclose(terminal);
}

}  // namespace fp8lab::experiments
