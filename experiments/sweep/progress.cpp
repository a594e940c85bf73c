#include "experiments/sweep/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace fp8lab::experiments {
namespace {

ProgressLine::Form form_of_stderr() {
  const char* ci = std::getenv("CI");
  const bool in_ci = ci != nullptr && std::strcmp(ci, "true") == 0;
  return ::isatty(STDERR_FILENO) && !in_ci ? ProgressLine::Form::redrawn
                                           : ProgressLine::Form::one_line_per_run;
}

std::string printed(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

ProgressLine::ProgressLine(std::size_t total) : ProgressLine(total, form_of_stderr(), stderr) {}

ProgressLine::ProgressLine(std::size_t total, Form form, std::FILE* out)
    : total_(total), form_(form), out_(out), start_(std::chrono::steady_clock::now()) {}

std::string ProgressLine::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  } else if (s >= 60) {
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lds", s);
  }
  return buffer;
}

double ProgressLine::remaining_seconds(double elapsed, std::size_t done, std::size_t total) {
  if (done == 0) return NAN;
  // Runs take about the same time each: elapsed per finished run x runs left.
  return elapsed / static_cast<double>(done) * static_cast<double>(total > done ? total - done : 0);
}

// Strings are built by append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
std::string ProgressLine::outcome_text(const RunRecord* record, double seconds) {
  std::string in = " in ";
  in.append(format_duration(seconds));
  std::string text;
  if (record == nullptr) return text.append("ended").append(in).append(" without a record");
  const std::string status = record->status.value_or("?");
  if (status == "diverged" && record->diverged_at_step.has_value()) {
    return text.append("diverged at step ")
        .append(std::to_string(*record->diverged_at_step))
        .append(in);
  }
  if (status == "unstable" && record->unstable_at_step.has_value()) {
    return text.append("unstable from step ")
        .append(std::to_string(*record->unstable_at_step))
        .append(in);
  }
  if (status == "failed") {
    std::string error = record->error.value_or("no message");
    error = error.substr(0, error.find('\n'));
    if (error.size() > 120) error = error.substr(0, 117).append("...");
    return text.append("failed").append(in).append(" (").append(error).append(")");
  }
  text.append(status).append(in);
  const FinalFigures final = record->final.value_or({});
  if (final.eval_rel_diff.has_value()) {
    return text.append(" (eval rel diff ")
        .append(printed("%+.2f%%", 100 * *final.eval_rel_diff))
        .append(")");
  }
  if (final.eval_loss.has_value()) {
    return text.append(" (eval loss ").append(printed("%.4g", *final.eval_loss)).append(")");
  }
  return text;
}

std::string ProgressLine::finished_line(std::size_t done, std::size_t total,
                                        const std::string& run_id, const RunRecord* record,
                                        double seconds, std::size_t running, double elapsed) {
  std::string label;
  if (record != nullptr) {
    label = record->kind == "baseline" ? "baseline" : record->recipe_label.value_or("");
  }
  std::string line = "[";
  line.append(std::to_string(done)).append("/").append(std::to_string(total)).append("] ");
  line.append(run_id);
  if (!label.empty()) line.append(" ").append(label);
  line.append(" ").append(outcome_text(record, seconds)).append(" | ");
  if (done >= total) return line.append("all done in ").append(format_duration(elapsed));
  return line.append(std::to_string(running))
      .append(" running, ETA ")
      .append(format_duration(remaining_seconds(elapsed, done, total)));
}

double ProgressLine::since(std::chrono::steady_clock::time_point start) const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ProgressLine::started(const std::string& run_id, std::size_t done, std::size_t running) {
  run_started_[run_id] = std::chrono::steady_clock::now();
  if (form_ == Form::redrawn) redraw(done, running);
}

void ProgressLine::finished(const std::string& run_id, const RunRecord* record, std::size_t done,
                            std::size_t running) {
  if (form_ == Form::redrawn) {
    redraw(done, running);
    return;
  }
  const auto it = run_started_.find(run_id);
  const double seconds = it == run_started_.end() ? NAN : since(it->second);
  if (it != run_started_.end()) run_started_.erase(it);
  const auto line = finished_line(done, total_, run_id, record, seconds, running, since(start_));
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void ProgressLine::redraw(std::size_t done, std::size_t running) {
  const double elapsed = since(start_);
  std::fprintf(out_, "\r[%zu/%zu runs] %zu running, %s elapsed, ETA %s   ", done, total_, running,
               format_duration(elapsed).c_str(),
               format_duration(remaining_seconds(elapsed, done, total_)).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) std::fputc('\n', out_);
  drawn_ = false;
}

}  // namespace fp8lab::experiments
