// The progress of a long sweep, on stderr, in one of two forms:
// - on a terminal, one line redrawn in place: "[12/40 runs] 2 running, 3m05s elapsed, ETA 7m10s";
// - otherwise (Slurm, nohup, CI logs: stderr is a file or a pipe), one line per finished run,
//   flushed at once: "[12/40] 3f2a09c1d4e5b6a7 delayed E4M3 m0 h16 max finished in 31s (eval rel
//   diff +0.42%) | 2 running, ETA 7m10s".
// CI=true takes the second form even on a pseudo-terminal: CI log viewers keep every redraw, and
// a line per run is what a CI log wants (it used to silence progress entirely). No LibTorch.
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

class ProgressLine {
 public:
  enum class Form { redrawn, one_line_per_run };

  // The form from stderr (a TTY, and CI not "true": redrawn).
  explicit ProgressLine(std::size_t total);
  ProgressLine(std::size_t total, Form form, std::FILE* out);

  // A run's process started; `done` runs have finished, `running` are running now.
  void started(const std::string& run_id, std::size_t done, std::size_t running);
  // A run ended; its record (nullptr when it wrote none; the caller has read it already) says how,
  // for the one-line-per-run form.
  void finished(const std::string& run_id, const RunRecord* record, std::size_t done,
                std::size_t running);
  // Ends the redrawn line (newline) if anything was drawn.
  void finish();
  Form form() const { return form_; }

  // "31s" / "5m07s" / "1h02m"; "?" for an unknown duration.
  static std::string format_duration(double seconds);
  // Seconds left when `done` of `total` runs took `elapsed` (runs at the pace so far, parallel
  // jobs included); NaN before the first run ends.
  static double remaining_seconds(double elapsed, std::size_t done, std::size_t total);
  // How a run ended, from its record: "finished in 31s (eval rel diff +0.42%)", "diverged at
  // step 12 in 5s", "failed in 2s (message)"; a null record: "ended in 3s without a record".
  static std::string outcome_text(const RunRecord* record, double seconds);
  // The one-line-per-run form's line (no newline).
  static std::string finished_line(std::size_t done, std::size_t total, const std::string& run_id,
                                   const RunRecord* record, double seconds, std::size_t running,
                                   double elapsed);

 private:
  void redraw(std::size_t done, std::size_t running);
  double since(std::chrono::steady_clock::time_point start) const;

  std::size_t total_;
  Form form_;
  std::FILE* out_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, std::chrono::steady_clock::time_point> run_started_;
};

}  // namespace fp8lab::experiments
