#include "experiments/runner/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fp8lab::experiments {

ProgressLine::ProgressLine(std::size_t total)
    : total_(total), start_(std::chrono::steady_clock::now()) {
  const char* ci = std::getenv("CI");
  enabled_ = ::isatty(STDERR_FILENO) && !(ci != nullptr && std::strcmp(ci, "true") == 0);
}

std::string ProgressLine::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  }
  return buffer;
}

void ProgressLine::update(std::size_t done, std::size_t running) {
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // Runs take about the same time each: remaining = elapsed per finished run x runs left.
  const double eta = done == 0 ? NAN
                               : elapsed / static_cast<double>(done) *
                                     static_cast<double>(total_ - done);
  std::fprintf(stderr, "\r[%zu/%zu runs] %zu running, %s elapsed, ETA %s   ", done, total_,
               running, format_duration(elapsed).c_str(), format_duration(eta).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace fp8lab::experiments
