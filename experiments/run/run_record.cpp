// The run record's parts every way of training a run shares (run_record.hpp): the head,
// provenance and instability rule, the training's rows, final figures and throughput, the layer
// statistics sidecar and the baseline's trajectory archive, filled into a RunRecord that
// results/ writes.
#include "experiments/run/run_record.hpp"

#include <ATen/Parallel.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <string_view>

#include "experiments/results/baseline_archive.hpp"
#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/run/cpu_numerics.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/run_ids.hpp"
#include "recipes/fields.hpp"

namespace fp8lab::experiments {

std::string now_utc() {
  const auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

namespace {

// NaN and ±Inf have no JSON spelling: they are written as null (docs/results-schema.md).
Field<double> finite_or_null(double v) {
  return std::isfinite(v) ? Field<double>(v) : Field<double>::null();
}

}  // namespace

LayerRow layer_record_row(const std::string& layer, Operand tensor, Gemm role,
                          const OperandStats& op) {
  LayerRow row;
  row.layer = layer;
  row.tensor = std::string(name(tensor));
  row.gemm = std::string(name(role));
  row.amax = finite_or_null(op.amax);
  row.scale_min = finite_or_null(op.scale_min);
  row.scale_max = finite_or_null(op.scale_max);
  row.count = static_cast<std::int64_t>(op.count);
  row.saturated = static_cast<std::int64_t>(op.saturated);
  row.underflowed = static_cast<std::int64_t>(op.underflowed);
  row.nan = static_cast<std::int64_t>(op.nan);
  row.sqnr_db = finite_or_null(op.sqnr_db());
  return row;
}

// The build, and the provenance of the request's recipe (or of a baseline), into the record.
void add_provenance(RunRecord& record, const RunRequest& request, const char* kind) {
  add_record_fields(record, build_provenance());
  // A null run is the baseline with a perturbation: no recipe, the baseline's provenance.
  if (std::string_view(kind) == "baseline" || std::string_view(kind) == "null") {
    add_record_fields(record, baseline_provenance());
  } else {
    add_record_fields(record, request.provenance.is_null()
                                  ? recipe_provenance(request.recipe.value())
                                  : request.provenance);
  }
}

// The rule the run was judged by (recipes/instability_rule.hpp), as text and in words.
void add_instability_rule(RunRecord& record, const RunRequest& request) {
  record.other["instability"] = {
      {"text", recipes::instability_rule_text(request.instability)},
      {"description", recipes::describe_instability_rule(request.instability)}};
}

RunRecord record_head(const RunRequest& request, const std::string& run_id, const char* kind) {
  RunRecord record;
  record.schema = "fp8lab.run";
  record.schema_version = kResultsSchemaVersion;
  record.run_id = run_id;
  record.kind = kind;
  record.workload = request.workload;
  record.seed = request.seed;
  record.backend = request.backend.name;
  record.high_precision = std::string(name(request.high_precision));
  record.host = host_name();
  record.machine = machine_facts();
  add_provenance(record, request, kind);
  return record;
}

// The sidecar of a run's layer statistics, written before its record (so that a valid record
// always has its sidecar: a resumed sweep never sees one without it), and its path relative to
// the directory in the record; null when the run kept no rows.
void add_layer_stats_sidecar(RunRecord& record, const ResultsDirectory& directory,
                             const std::string& run_id, const TrainingResult& t) {
  if (t.layer_stats_rows.empty()) {
    record.layer_stats_sidecar = Field<std::string>::null();
    return;
  }
  const auto relative = layer_stats_relative_path(run_id);
  write_results_file(directory, relative,
                     layer_stats_parquet(t.layer_stats_rows, directory.root() / relative));
  record.layer_stats_sidecar = relative.generic_string();
}

namespace {

double relative_difference(double value, double reference) {
  return (value - reference) / std::fabs(reference);
}

// A step, or null when there is none.
Field<std::int64_t> step_or_null(const std::optional<std::int64_t>& step) {
  return step ? Field<std::int64_t>(*step) : Field<std::int64_t>::null();
}

// Status, steps and divergence of a finished training.
void add_status(RunRecord& record, const TrainingResult& t) {
  record.status = t.status;
  record.steps_planned = t.steps_planned;
  record.steps_completed = t.steps_completed;
  record.diverged_at_step = step_or_null(t.diverged_at_step);
  record.divergence_reason = t.diverged_at_step ? Field<std::string>(t.divergence_reason)
                                                : Field<std::string>::null();
  record.unstable_at_step = step_or_null(t.unstable_at_step);
  record.unstable_met_at_step = step_or_null(t.unstable_met_at_step);
  record.instability_reason = t.unstable_at_step ? Field<std::string>(t.instability_reason)
                                                 : Field<std::string>::null();
  record.error = Field<std::string>::null();
}

// The baseline record's losses, NaN where it logged none: train by step, eval by step.
struct BaselineLosses {
  std::map<std::int64_t, double> train;  // by step: long runs log every k-th step
  std::map<std::int64_t, double> eval;
};

BaselineLosses baseline_losses(const RunRecord* baseline) {
  BaselineLosses losses;
  if (baseline == nullptr) return losses;
  for (const auto& row : *baseline->train) losses.train[row.step] = row.loss.value_or(NAN);
  for (const auto& row : *baseline->eval) losses.eval[row.step] = row.loss.value_or(NAN);
  return losses;
}

// One row per train step: the loss and, with a baseline, its differences from the baseline's.
std::vector<TrainRow> train_rows(const TrainingResult& t, const BaselineLosses& baseline) {
  std::vector<TrainRow> train;
  for (std::size_t i = 0; i < t.train_loss.size(); ++i) {
    const auto step = t.train_steps[i];
    TrainRow row;
    row.step = step;
    row.loss = finite_or_null(t.train_loss[i]);
    if (const auto it = baseline.train.find(step); it != baseline.train.end()) {
      const double b = it->second;
      row.baseline_loss = finite_or_null(b);
      row.abs_diff = finite_or_null(t.train_loss[i] - b);
      row.rel_diff = finite_or_null(relative_difference(t.train_loss[i], b));
    }
    train.push_back(std::move(row));
  }
  return train;
}

// One row per eval step: the loss, its differences from the baseline's and the weight and
// gradient divergence from the baseline's trajectory where measured.
std::vector<EvalRow> eval_rows(const TrainingResult& t, const BaselineLosses& baseline) {
  std::map<std::int64_t, std::pair<double, double>> divergence;
  for (const auto& [step, w, g] : t.divergence) divergence[step] = {w, g};
  std::vector<EvalRow> eval;
  for (std::size_t i = 0; i < t.eval.size(); ++i) {
    const auto& [step, loss] = t.eval[i];
    EvalRow row;
    row.step = step;
    row.loss = finite_or_null(loss);
    if (i < t.eval_standard_error.size()) row.loss_se = finite_or_null(t.eval_standard_error[i]);
    if (i < t.eval_examples.size()) row.examples = t.eval_examples[i];
    if (auto it = baseline.eval.find(step); it != baseline.eval.end()) {
      row.baseline_loss = finite_or_null(it->second);
      row.abs_diff = finite_or_null(loss - it->second);
      row.rel_diff = finite_or_null(relative_difference(loss, it->second));
    }
    if (auto it = divergence.find(step); it != divergence.end()) {
      row.weight_rel_l2 = finite_or_null(it->second.first);
      row.grad_rel_l2 = finite_or_null(it->second.second);
    }
    eval.push_back(std::move(row));
  }
  return eval;
}

// A field of a row under its "final" name: null when the row has it null; absent when absent.
template <class T>
void copy_field(Field<T>& to, const Field<T>& from) {
  if (from.present()) to = from;
}

// The last train loss, and the first and last eval rows' figures under their "final" names.
void add_final_losses(FinalFigures& final, const TrainingResult& t,
                      const std::vector<EvalRow>& eval) {
  final.train_loss = t.train_loss.empty() ? Field<double>::null()
                                          : finite_or_null(t.train_loss.back());
  if (eval.empty()) return;
  const auto& first = eval.front();
  const auto& last = eval.back();
  final.eval_loss_se = last.loss_se.present() ? last.loss_se : Field<double>::null();
  final.eval_example_losses = t.final_eval_example_losses;
  final.eval_step = last.step;
  final.eval_loss = last.loss.present() ? last.loss : Field<double>::null();
  final.initial_eval_loss = first.loss.present() ? first.loss : Field<double>::null();
  copy_field(final.baseline_eval_loss, last.baseline_loss);
  copy_field(final.eval_abs_diff, last.abs_diff);
  copy_field(final.eval_rel_diff, last.rel_diff);
  copy_field(final.weight_rel_l2, last.weight_rel_l2);
  copy_field(final.grad_rel_l2, last.grad_rel_l2);
  copy_field(final.baseline_initial_eval_loss, first.baseline_loss);
}

// Quantization quality over the run: mean SQNR of the forward operands (input and weight as
// fprop reads them) and of the gradients (grad_output as dgrad reads it), over every logged
// step and layer; and the underflowed fraction of each tensor in the last logged step (the
// symptom of a margin or a format too narrow for it).
void add_quantization_quality(FinalFigures& final, const std::vector<LayerRow>& layer_statistics) {
  double forward_db = 0, forward_n = 0, backward_db = 0, backward_n = 0;
  std::map<std::string, std::pair<double, double>> underflow;  // tensor -> (underflowed, count)
  const auto last_step = layer_statistics.empty() ? std::optional<std::int64_t>()
                                                  : layer_statistics.back().step.get();
  for (const auto& row : layer_statistics) {
    const auto& tensor = *row.tensor;
    const auto& gemm = *row.gemm;
    const bool primary = tensor == "grad_output" ? gemm == "dgrad" : gemm == "fprop";
    if (!primary) continue;
    if (row.sqnr_db.has_value()) {
      (tensor == "grad_output" ? backward_db : forward_db) += *row.sqnr_db;
      (tensor == "grad_output" ? backward_n : forward_n) += 1;
    }
    if (row.step.get() == last_step) {
      underflow[tensor].first += static_cast<double>(*row.underflowed);
      underflow[tensor].second += static_cast<double>(*row.count);
    }
  }
  final.forward_sqnr_db = forward_n > 0 ? Field<double>(forward_db / forward_n)
                                        : Field<double>::null();
  final.gradient_sqnr_db = backward_n > 0 ? Field<double>(backward_db / backward_n)
                                          : Field<double>::null();
  for (const char* tensor : {"input", "weight", "grad_output"}) {
    const auto it = underflow.find(tensor);
    auto& fraction = tensor == std::string_view("input")    ? final.input_underflow_fraction
                     : tensor == std::string_view("weight") ? final.weight_underflow_fraction
                                                            : final.grad_output_underflow_fraction;
    fraction = it != underflow.end() && it->second.second > 0
                   ? Field<double>(it->second.first / it->second.second)
                   : Field<double>::null();
  }
}

Throughput throughput(const TrainingResult& t) {
  const double steps = static_cast<double>(std::max<std::int64_t>(t.steps_completed, 1));
  Throughput tp;
  tp.step_seconds = t.median_step_seconds;
  tp.steps_per_second = t.train_seconds > 0 ? steps / t.train_seconds : 0.0;
  tp.tokens_per_second =
      t.train_seconds > 0 ? steps * static_cast<double>(t.tokens_per_step) / t.train_seconds : 0.0;
  tp.tokens_per_step = t.tokens_per_step;
  tp.train_seconds = t.train_seconds;
  tp.gemm_seconds = t.gemm_seconds;
  tp.gemm_time_share = t.train_seconds > 0 ? t.gemm_seconds / t.train_seconds : 0.0;
  return tp;
}

}  // namespace

// Losses, divergence, final figures and throughput of a finished training into the record.
void add_training(RunRecord& record, const TrainingResult& t, const RunRecord* baseline) {
  add_status(record, t);
  const BaselineLosses baseline_loss = baseline_losses(baseline);
  record.train = train_rows(t, baseline_loss);
  record.eval = eval_rows(t, baseline_loss);
  record.layers = t.layer_statistics;
  FinalFigures final;
  add_final_losses(final, t, *record.eval);
  add_quantization_quality(final, t.layer_statistics);
  record.final = std::move(final);
  record.throughput = throughput(t);
}

// The threads the run's step used, beside its timings: they change the timings and nothing else
// (the sim backend's GEMM and quantizer threads; torch's intra-op threads, 1:
// use_one_torch_thread).
void add_threads(RunRecord& record, const RunRequest& request) {
  record.throughput.set().threads = request.backend.threads;
  record.throughput.set().torch_threads = at::get_num_threads();
}

std::string trajectory_key(const char* what, std::int64_t step) {
  return std::string(what) + "_" + std::to_string(step);
}

void add_baseline_archive(RunRecord& record, const ResultsDirectory& directory,
                          const std::string& run_id, const TrainingResult& result) {
  record.parameter_names = result.parameter_names;
  torch::serialize::OutputArchive archive;
  auto& steps = record.snapshot_steps.set();
  steps.clear();
  for (const auto& s : result.snapshots) {
    archive.write(trajectory_key("weights", s.step), s.weights);
    archive.write(trajectory_key("gradients", s.step), s.gradients);
    steps.push_back(s.step);
  }
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_results_file(directory, std::filesystem::path("baselines") / (run_id + ".pt"), bytes.str());
  record.other["baseline_archive"] = archive_fingerprint(bytes.str());  // baseline_archive.hpp
}

BaselineReference load_reference(const ResultsDirectory& directory, const RunRecord& baseline) {
  BaselineReference reference;
  reference.run_id = baseline.run_id;
  reference.parameter_names = *baseline.parameter_names;
  torch::serialize::InputArchive archive;
  // Read by fp8lab (a regular file, no link: no_follow.hpp), not opened by LibTorch by name.
  const auto path = directory.baseline_trajectory_path(reference.run_id);
  const auto bytes = read_regular_file(path);
  if (!bytes) throw std::runtime_error(path.string() + " does not exist");
  std::istringstream in(*bytes);
  archive.load_from(in);
  for (const auto step : *baseline.snapshot_steps) {
    ModelSnapshot s;
    s.step = step;
    archive.read(trajectory_key("weights", s.step), s.weights);
    archive.read(trajectory_key("gradients", s.step), s.gradients);
    reference.snapshots.push_back(std::move(s));
  }
  return reference;
}

// The baseline record of the request, read from `directory` or trained now; throws unless it
// finished.
RunRecord finished_baseline(const ResultsDirectory& directory, const RunRequest& request) {
  const auto baseline_id = baseline_run_id(request);
  auto baseline_file = read_run_record_file(directory.run_record_path(baseline_id));
  // A finished baseline whose archive is bad is set aside and runs again (baseline_archive.hpp).
  if (const auto aside = set_aside_bad_baseline(directory, baseline_file)) {
    std::fprintf(stderr, "fp8lab run: %s\n", aside->c_str());
    baseline_file.record.reset();
  }
  auto baseline = baseline_file.record ? run_record_from_json(*baseline_file.record)
                                       : execute_baseline(directory, request);
  // An unstable baseline trained every step (execute_baseline): its runs compare with it.
  const auto status = baseline.status.value_or("");
  if (status != "finished" && status != "unstable") {
    throw std::runtime_error("the baseline " + baseline_id + " is " + status + ": " +
                             baseline.error.value_or("no error recorded"));
  }
  return baseline;
}

}  // namespace fp8lab::experiments
