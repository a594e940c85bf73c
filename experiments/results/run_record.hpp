// The typed run record: what runs/<run_id>.json and each line of results.jsonl hold
// (docs/results-schema.md, "Run record", schema version kResultsSchemaVersion), with its one
// from_json and to_json. The report reads records as RunRecord; nothing outside experiments/results/
// parses a record's JSON. No LibTorch.
//
// Bytes: a record read and written back is the same JSON text. Every field keeps whether the record
// had it (absent in records older than the field), had it null (a number that was not finite, a
// step never reached) or had a value; `other` keeps, verbatim, the fields this struct does not
// type (provenance, upstream, first_non_finite, ...; see RunRecord), and the keys of a part that a
// newer fp8lab of the same version added.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {

// One field of a record: set, null or absent (see above).
template <class T>
class Field {
 public:
  // Absent; a value makes it set (implicitly: `record.seed = 3`), null() makes it null.
  Field() = default;
  Field(T value) : state_(State::set), value_(std::move(value)) {}  // NOLINT: a value is a Field
  static Field null() {
    Field field;
    field.state_ = State::null;
    return field;
  }

  bool present() const { return state_ != State::absent; }
  bool is_null() const { return state_ == State::null; }
  bool has_value() const { return state_ == State::set; }
  // The value; nullopt when null or absent.
  std::optional<T> get() const { return has_value() ? std::optional<T>(value_) : std::nullopt; }
  T value_or(T fallback) const { return has_value() ? value_ : std::move(fallback); }
  // The value, or T{} when null or absent.
  const T& operator*() const { return value_; }
  const T* operator->() const { return &value_; }
  // The value, made set when it was not (writers fill a part in place).
  T& set() {
    state_ = State::set;
    return value_;
  }

 private:
  enum class State { absent, null, set };
  State state_ = State::absent;
  T value_{};
};

// One `train` row: the step's loss and, for runs compared with a baseline, its differences.
struct TrainRow {
  std::int64_t step = 0;
  Field<double> loss, baseline_loss, abs_diff, rel_diff;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("step", r.step), f("loss", r.loss), f("baseline_loss", r.baseline_loss);
    f("abs_diff", r.abs_diff), f("rel_diff", r.rel_diff);
  }
};

// One `eval` row: the eval loss, its standard error and the examples it is over, and against the
// baseline the differences and the weight and gradient divergence.
struct EvalRow {
  std::int64_t step = 0;
  Field<double> loss, loss_se, baseline_loss, abs_diff, rel_diff, weight_rel_l2, grad_rel_l2;
  Field<std::int64_t> examples;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("step", r.step), f("loss", r.loss), f("loss_se", r.loss_se), f("examples", r.examples);
    f("baseline_loss", r.baseline_loss), f("abs_diff", r.abs_diff), f("rel_diff", r.rel_diff);
    f("weight_rel_l2", r.weight_rel_l2), f("grad_rel_l2", r.grad_rel_l2);
  }
};

// One `layers` row: one operand's quantization statistics of one Linear in a logged step.
struct LayerRow {
  Field<std::int64_t> step;
  Field<std::string> layer, tensor, gemm;  // tensor: input | weight | grad_output
  Field<double> amax, scale_min, scale_max, sqnr_db;
  Field<std::int64_t> count, saturated, underflowed, nan;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("step", r.step), f("layer", r.layer), f("tensor", r.tensor), f("gemm", r.gemm);
    f("amax", r.amax), f("scale_min", r.scale_min), f("scale_max", r.scale_max);
    f("sqnr_db", r.sqnr_db), f("count", r.count), f("saturated", r.saturated);
    f("underflowed", r.underflowed), f("nan", r.nan);
  }
};

// `final`: the last train loss, the first and last eval rows' figures, and the quantization
// quality over the run.
struct FinalFigures {
  Field<double> train_loss, eval_loss, eval_loss_se, initial_eval_loss;
  Field<std::int64_t> eval_step;
  Field<std::vector<double>> eval_example_losses;  // NaN where the record holds null
  Field<double> baseline_eval_loss, baseline_initial_eval_loss, eval_abs_diff, eval_rel_diff;
  Field<double> weight_rel_l2, grad_rel_l2, forward_sqnr_db, gradient_sqnr_db;
  Field<double> input_underflow_fraction, weight_underflow_fraction, grad_output_underflow_fraction;
  nlohmann::json other = nlohmann::json::object();

  // The underflowed fraction of `tensor` (input, weight, grad_output) in the last logged step.
  const Field<double>& underflow_fraction(const std::string& tensor) const;

  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("train_loss", r.train_loss), f("eval_loss", r.eval_loss), f("eval_loss_se", r.eval_loss_se);
    f("initial_eval_loss", r.initial_eval_loss), f("eval_step", r.eval_step);
    f("eval_example_losses", r.eval_example_losses);
    f("baseline_eval_loss", r.baseline_eval_loss);
    f("baseline_initial_eval_loss", r.baseline_initial_eval_loss);
    f("eval_abs_diff", r.eval_abs_diff), f("eval_rel_diff", r.eval_rel_diff);
    f("weight_rel_l2", r.weight_rel_l2), f("grad_rel_l2", r.grad_rel_l2);
    f("forward_sqnr_db", r.forward_sqnr_db), f("gradient_sqnr_db", r.gradient_sqnr_db);
    f("input_underflow_fraction", r.input_underflow_fraction);
    f("weight_underflow_fraction", r.weight_underflow_fraction);
    f("grad_output_underflow_fraction", r.grad_output_underflow_fraction);
  }
};

// `throughput`: the run's timings, and the probes of the step against the baseline's and fp32's.
struct Throughput {
  Field<double> step_seconds, steps_per_second, tokens_per_second, train_seconds, gemm_seconds;
  Field<double> gemm_time_share;
  Field<std::int64_t> tokens_per_step, threads, torch_threads;
  Field<double> probe_step_seconds, baseline_step_seconds, fp32_step_seconds;
  Field<double> step_time_over_baseline, step_time_over_fp32;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("step_seconds", r.step_seconds), f("steps_per_second", r.steps_per_second);
    f("tokens_per_second", r.tokens_per_second), f("train_seconds", r.train_seconds);
    f("gemm_seconds", r.gemm_seconds), f("gemm_time_share", r.gemm_time_share);
    f("tokens_per_step", r.tokens_per_step), f("threads", r.threads);
    f("torch_threads", r.torch_threads), f("probe_step_seconds", r.probe_step_seconds);
    f("baseline_step_seconds", r.baseline_step_seconds);
    f("fp32_step_seconds", r.fp32_step_seconds);
    f("step_time_over_baseline", r.step_time_over_baseline);
    f("step_time_over_fp32", r.step_time_over_fp32);
  }
};

// `machine`: the CPU numerics the run had (run/cpu_numerics.hpp).
struct Machine {
  Field<std::string> cpu_model, cpu_numerics, aten_cpu_capability, mkl_cbwr, sim_simd_target;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("cpu_model", r.cpu_model), f("cpu_numerics", r.cpu_numerics);
    f("aten_cpu_capability", r.aten_cpu_capability), f("mkl_cbwr", r.mkl_cbwr);
    f("sim_simd_target", r.sim_simd_target);
  }
};

// One `optimizer_states.rows` row: the stored moments' SQNR after a logged step's store, and the
// update's relative error from rounding the master weights (run/quantized_adamw.hpp). null:
// the moment was zero (SQNR), or stored exactly (fp32: no noise), or the update was zero.
struct OptimizerStateRow {
  std::int64_t step = 0;
  Field<double> m_sqnr_db, v_sqnr_db, update_rel_error;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("step", r.step), f("m_sqnr_db", r.m_sqnr_db), f("v_sqnr_db", r.v_sqnr_db);
    f("update_rel_error", r.update_rel_error);
  }
};

// `optimizer_states`: how AdamW stored its moments and weights (recipes/optimizer_states.hpp),
// absent from a run whose recipe leaves them at fp32 (today's AdamW), and its rows.
struct OptimizerStatesPart {
  Field<std::string> m, v, scaling, expansion, master_weights;
  Field<std::vector<OptimizerStateRow>> rows;
  nlohmann::json other = nlohmann::json::object();
  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("m", r.m), f("v", r.v), f("scaling", r.scaling), f("expansion", r.expansion);
    f("master_weights", r.master_weights), f("rows", r.rows);
  }
};

// A precision schedule's switch (recipes/schedule.hpp; FP8 runs of a scheduled recipe): the step
// at which stage `stage` (1, 2, ...) started, and that stage's recipe (high_precision: none).
struct ScheduleSwitch {
  std::int64_t step = 0;
  std::int64_t stage = 0;
  Field<std::string> recipe_label, recipe_canonical;
  nlohmann::json other = nlohmann::json::object();

  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("step", r.step), f("stage", r.stage), f("recipe_label", r.recipe_label);
    f("recipe_canonical", r.recipe_canonical);
  }
};

// One run's record. Typed: what identifies the run, how it ended, its recipe's identity, its rows,
// final figures, throughput and machine. Kept as JSON in `other` (written back as read): the
// provenance (source, upstream, changed_fields, fp8lab_version, git_commit, ...), workload_options,
// instability, fp8_layers, fp8_gemms, first_non_finite, autoswitch, ablation,
// null_noise, shadow_check, python_model, the baseline's archive fields, and any field a newer
// fp8lab of this schema version added.
struct RunRecord {
  std::string schema = "fp8lab.run";
  std::int64_t schema_version = 0;
  std::string run_id, kind, workload;  // kind: fp8 | baseline | null
  Field<std::string> status;           // finished | diverged | unstable | failed
  Field<std::int64_t> seed;
  Field<std::string> workload_name, workload_description, backend, high_precision, host;
  Field<std::string> started_at, finished_at, runs_as;
  Field<std::string> error, divergence_reason, instability_reason;
  Field<std::int64_t> steps_planned, steps_completed;
  Field<std::int64_t> parameter_count, non_embedding_parameter_count;
  Field<std::int64_t> diverged_at_step, unstable_at_step, unstable_met_at_step;
  Field<std::string> baseline_run_id, null_arm, perturbation;
  Field<std::map<std::string, std::string>> recipe;  // field -> value as written in recipe files
  Field<std::vector<std::string>> recipe_fields;
  Field<std::string> recipe_canonical, recipe_label;
  Field<std::string> layer_stats_sidecar;  // relative to the results directory; null: none
  Field<std::string> probe_sidecar;        // the same (probe_sidecar.hpp); null: none
  // The distinct inner dimensions K of the GEMMs run in FP8: fprop, dgrad, wgrad -> [K].
  Field<std::map<std::string, std::vector<std::int64_t>>> gemm_k;
  // FP8 runs: the Linears converted to FP8 whose forward did not run in the first training step
  // (linear/convert_model.hpp: fp8_linears_not_run); null when no step completed.
  Field<std::vector<std::string>> fp8_linears_not_run;
  // Baselines: the trained parameters' names and the steps of the trajectory archive's snapshots
  // (baseline_archive.hpp); its fingerprint stays in `other` (baseline_archive).
  Field<std::vector<std::string>> parameter_names;
  Field<std::vector<std::int64_t>> snapshot_steps;
  Field<std::vector<TrainRow>> train;
  Field<std::vector<EvalRow>> eval;
  Field<std::vector<LayerRow>> layers;
  Field<FinalFigures> final;
  Field<Throughput> throughput;
  Field<Machine> machine;
  // The switches of a scheduled recipe's run, in step order (absent for other runs).
  Field<std::vector<ScheduleSwitch>> schedule_switches;
  Field<OptimizerStatesPart> optimizer_states;
  nlohmann::json other = nlohmann::json::object();
  // Not part of the record's JSON: what of its workload tells it apart from the other records of
  // a report ("smooth_swiglu=true"; set by label_workload_differences, stats/report_data.hpp),
  // shown after its recipe label by run_label. "" unless a report set it.
  std::string label_workload;

  // A recipe field's value as written in recipe files; "" when the record has none.
  std::string recipe_value(const std::string& field) const;
  // A workload option's value when it is a number (workload_options.lr), else nullopt.
  std::optional<double> workload_option_number(const std::string& option) const;
  // The instability rule's description (instability.description), when the record has one.
  std::optional<std::string> instability_description() const;

  template <class R, class F>
  static void fields(R& r, F&& f) {
    f("schema", r.schema), f("schema_version", r.schema_version), f("run_id", r.run_id);
    f("kind", r.kind), f("workload", r.workload), f("status", r.status), f("seed", r.seed);
    f("workload_name", r.workload_name), f("workload_description", r.workload_description);
    f("backend", r.backend), f("high_precision", r.high_precision), f("host", r.host);
    f("started_at", r.started_at), f("finished_at", r.finished_at), f("runs_as", r.runs_as);
    f("error", r.error), f("divergence_reason", r.divergence_reason);
    f("instability_reason", r.instability_reason), f("steps_planned", r.steps_planned);
    f("steps_completed", r.steps_completed), f("diverged_at_step", r.diverged_at_step);
    f("parameter_count", r.parameter_count);
    f("non_embedding_parameter_count", r.non_embedding_parameter_count);
    f("unstable_at_step", r.unstable_at_step), f("unstable_met_at_step", r.unstable_met_at_step);
    f("baseline_run_id", r.baseline_run_id), f("null_arm", r.null_arm);
    f("perturbation", r.perturbation), f("recipe", r.recipe), f("recipe_fields", r.recipe_fields);
    f("recipe_canonical", r.recipe_canonical), f("recipe_label", r.recipe_label);
    f("layer_stats_sidecar", r.layer_stats_sidecar), f("probe_sidecar", r.probe_sidecar);
    f("gemm_k", r.gemm_k), f("fp8_linears_not_run", r.fp8_linears_not_run);
    f("parameter_names", r.parameter_names), f("snapshot_steps", r.snapshot_steps);
    f("train", r.train), f("eval", r.eval), f("layers", r.layers);
    f("final", r.final), f("throughput", r.throughput), f("machine", r.machine);
    f("schedule_switches", r.schedule_switches);
    f("optimizer_states", r.optimizer_states);
  }
};

// The record of `json` (a run record, run_record_problem: nullopt; results_store.hpp). Throws
// std::invalid_argument naming the field when a typed field has another JSON type.
RunRecord run_record_from_json(const nlohmann::json& json);
// The record's JSON: run_record_from_json(j) written back is j.
nlohmann::json to_json(const RunRecord& record);
// One `layers` row's JSON and the `machine` part's, as the record holds them.
nlohmann::json to_json(const LayerRow& row);
nlohmann::json to_json(const Machine& machine);
// Fields of a record that a writer has as JSON (the provenance, whose parts the record keeps
// verbatim), read into `record` as run_record_from_json reads them: a typed key into its field,
// any other into `other`, replacing what the record had under that key. Throws as
// run_record_from_json.
void add_record_fields(RunRecord& record, const nlohmann::json& fields);

// Writes the record as its run's record file and results.jsonl line
// (ResultsDirectory::write_run_record).
void write_run_record(const ResultsDirectory& directory, const RunRecord& record);

}  // namespace fp8lab::experiments
