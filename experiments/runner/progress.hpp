// The progress line of a long sweep: "[12/40 runs] 2 running, 3m05s elapsed, ETA 7m10s", redrawn
// in place on a terminal; silent when stderr is not a TTY or CI=true (logs stay clean). No LibTorch.
#pragma once

#include <chrono>
#include <string>

namespace fp8lab::experiments {

class ProgressLine {
 public:
  explicit ProgressLine(std::size_t total);
  // Redraws the line (when enabled) after a change.
  void update(std::size_t done, std::size_t running);
  // Ends the line (newline) if anything was drawn.
  void finish();
  bool enabled() const { return enabled_; }

  // "5m07s" / "1h02m"; "?" for an unknown duration.
  static std::string format_duration(double seconds);

 private:
  std::size_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace fp8lab::experiments
