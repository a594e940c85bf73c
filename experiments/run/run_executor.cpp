#include "experiments/run/run_executor.hpp"
#include "experiments/run/schedule_run.hpp"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "experiments/linear/backend_linear.hpp"
#include "experiments/linear/beyond_gemm.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/operand_noise.hpp"
#include "experiments/linear/what_if.hpp"
#include "experiments/results/baseline_archive.hpp"
#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/run/cpu_numerics.hpp"
#include "experiments/run/layer_stats_rows.hpp"
#include "experiments/run/null_run.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/python_run.hpp"
#include "experiments/run/run_diagnostics.hpp"
#include "experiments/run/run_hooks.hpp"
#include "experiments/run/run_ids.hpp"
#include "experiments/run/run_probes.hpp"
#include "experiments/run/run_record.hpp"
#include "experiments/run/training.hpp"
#include "experiments/workloads/registry.hpp"
#include "experiments/workloads/workload_record.hpp"
#include "recipes/fields.hpp"
#include "recipes/role_rules.hpp"

// A failure of the recipe never escapes execute_*: an exception becomes a record with status
// "failed" and the message (a result). A failure of the machine does: an IoError (io_error.hpp: a
// full disk) or a NotARegularFile (no_follow.hpp: a planted link or FIFO) propagates and no record
// is written (run_errors.hpp).
namespace fp8lab::experiments {
namespace {

// The shadow check's counts of a run's backend, when it has one (cuda_backend.hpp, shadow_check.hpp).
void add_shadow_check(RunRecord& record, const LinearBackend& backend) {
  if (const auto* shadowed = dynamic_cast<const ShadowCheckedBackend*>(&backend)) {
    const ShadowReport report = shadowed->report();
    record.other["shadow_check"] = to_json(report);
    // Also in the run's log, so that a mismatch is seen without opening the record.
    std::fprintf(stderr,
                 "shadow check (%s vs sim, every %lld steps): %lld mismatches in %lld "
                 "values over %lld calls\n",
                 std::string(backend.name()).c_str(), static_cast<long long>(report.every),
                 static_cast<long long>(report.mismatches), static_cast<long long>(report.compared),
                 static_cast<long long>(report.operations));
    for (const auto& line : report.first) std::fprintf(stderr, "  %s\n", line.c_str());
  }
}

}  // namespace

namespace {

// The sidecar rows of one Linear's step: its own quantizations (FP8 Linears) and each what-if
// recipe's (every Linear).
void add_sidecar_rows(std::vector<LayerStatsRow>& rows, const NamedLinearStats& linear,
                      const WhatIfRecipes& what_if) {
  const auto add_table = [&](const OperandTable& table, const std::string& recipe) {
    for (auto tensor : {Operand::kInput, Operand::kWeight, Operand::kGradOutput}) {
      for (auto role : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
        const auto& op = table[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(role)];
        if (op.quantizations == 0) continue;
        rows.push_back(layer_stats_row(0, linear.name, tensor, role, recipe, op));
      }
    }
  };
  if (linear.fp8) add_table(linear.stats.operands, kTrainedRecipe);
  for (std::size_t i = 0; i < linear.stats.what_if.size() && i < what_if.size(); ++i) {
    add_table(linear.stats.what_if[i], what_if[i].name);
  }
}

// After each step: per-layer rows for every operand an Fp8Linear quantized in that step (the
// record's, and the sidecar's with the what-if recipes' beside them), and the GEMM seconds of
// every backend Linear (FP8 and high precision); then resets the statistics.
StepMeasurements take_linear_measurements(TrainableModel& model, bool want_rows,
                                          const WhatIfRecipes& what_if) {
  StepMeasurements m;
  for (const auto& linear : collect_linear_stats(model)) {
    m.gemm_seconds += linear.stats.total_gemm_seconds();
    if (!want_rows) continue;
    add_sidecar_rows(m.sidecar_rows, linear, what_if);
    if (!linear.fp8) continue;
    for (auto tensor : {Operand::kInput, Operand::kWeight, Operand::kGradOutput}) {
      for (auto role : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
        const auto& op = linear.stats.operand(tensor, role);
        if (op.quantizations == 0) continue;
        m.rows.push_back(layer_record_row(linear.name, tensor, role, op));
      }
    }
  }
  reset_linear_stats(model);
  return m;
}

// Where the model and its batches live (BackendChoice::trains_on_cuda): --backend cuda trains
// on the GPU (the backend's resident path); sim and cuda-staged on the CPU.
torch::Device device_for(const BackendChoice& choice) {
  if (!choice.trains_on_cuda()) return torch::kCPU;
  if (!torch::cuda::is_available()) {
    throw std::runtime_error("--backend cuda trains the model on the GPU, but LibTorch sees no "
                             "CUDA device; accepted here: sim, or cuda-staged (model on the CPU)");
  }
  return torch::kCUDA;
}

// ModelHooks::measure_operands: every backend Linear of the model.
void measure_operands(TrainableModel& model, bool on) { set_measure_operands(model, on); }

// The what-if recipes to every backend Linear of the model (null: none).
void attach_what_if(TrainableModel& model, const std::shared_ptr<const WhatIfRecipes>& what_if) {
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = dynamic_cast<BackendLinearImpl*>(module.get())) linear->set_what_if(what_if);
  }
}

// ModelHooks::take_step_measurements, with the what-if recipes' names for the sidecar rows.
std::function<StepMeasurements(TrainableModel&, bool)> linear_measurements(
    std::shared_ptr<const WhatIfRecipes> what_if) {
  if (!what_if) what_if = std::make_shared<const WhatIfRecipes>();
  return [what_if](TrainableModel& model, bool want_rows) {
    return take_linear_measurements(model, want_rows, *what_if);
  };
}

// The request's what-if recipes, lowered (null when it names none).
std::shared_ptr<const WhatIfRecipes> what_if_of(const RunRequest& request) {
  if (request.what_if.empty()) return nullptr;
  return std::make_shared<const WhatIfRecipes>(lower_what_if(request.what_if, "--what-if"));
}

}  // namespace

ModelHooks baseline_hooks(HighPrecision precision, std::shared_ptr<const LinearBackend> backend,
                          torch::Device device, std::shared_ptr<const WhatIfRecipes> what_if) {
  ModelHooks hooks;
  hooks.device = device;
  hooks.measure_operands = measure_operands;
  hooks.convert = [precision, backend, what_if](TrainableModel& model) {
    convert_model_to_high_precision(model, backend, precision);
    attach_what_if(model, what_if);
  };
  hooks.take_step_measurements = linear_measurements(what_if);
  return hooks;
}

namespace {

// Plain LibTorch Linears (the FP32 throughput reference) on `device`.
ModelHooks plain_torch_hooks(torch::Device device) {
  ModelHooks hooks;
  hooks.device = device;
  return hooks;
}

// The backend the throughput probes time: the run's `backend`, or without the shadow check when
// it has one (its replays are not the step's cost), so that every arm of a probe runs on the
// same device and backend.
std::shared_ptr<const LinearBackend> timing_backend(const BackendChoice& choice,
                                                    std::shared_ptr<const LinearBackend> backend) {
  return choice.shadow_every == 0 ? backend : make_backend({choice.name, 0, choice.threads});
}

}  // namespace

ModelHooks fp8_hooks(const recipes::Recipe& recipe, HighPrecision precision,
                     std::shared_ptr<const LinearBackend> backend, torch::Device device,
                     std::shared_ptr<const WhatIfRecipes> what_if,
                     std::shared_ptr<RunDiagnostics> diagnostics) {
  ModelHooks hooks;
  hooks.device = device;
  hooks.measure_operands = measure_operands;
  hooks.convert = [recipe, precision, backend, what_if, diagnostics](TrainableModel& model) {
    ConvertOptions options;
    options.high_precision = precision;
    convert_model(model, recipe, backend, options);
    // Linears the filter skipped run the baseline's Linear, so that the runs differ only in the
    // FP8 layers.
    convert_model_to_high_precision(model, backend, precision);
    apply_beyond_gemm_plans(model, recipe);  // LayerNorm / activation, where the recipe asks
    attach_what_if(model, what_if);
    if (diagnostics) diagnostics->attach(model);
  };
  if (diagnostics) {
    hooks.before_step = [diagnostics](TrainableModel&, std::int64_t step) {
      diagnostics->before_step(step);
    };
    hooks.after_step = [diagnostics](TrainableModel& model, std::int64_t step) {
      diagnostics->after_step(model, step);
    };
    if (diagnostics->measures_every_step()) {
      hooks.measure_operands = [](TrainableModel& model, bool) { measure_operands(model, true); };
    }
  }
  hooks.take_step_measurements = linear_measurements(what_if);
  hooks.use_autocast_during_eval = recipe.use_autocast_during_eval;
  return hooks;
}

namespace {

// A per_role recipe's plans of one FP8 Linear, by role (recipes/role_rules.hpp: plan_text).
nlohmann::json layer_plans_json(const Fp8LinearImpl& linear, const recipes::Recipe& recipe,
                                const std::string& layer) {
  nlohmann::json plans = nlohmann::json::object();
  for (const recipes::Role role : recipes::kRoles) {
    const Gemm gemm = recipes::gemm_of(role);
    plans[std::string(recipes::name(role))] =
        linear.runs_fp8(gemm)
            ? recipes::plan_text(recipes::plan(recipe, layer, recipes::operand_of(role), gemm))
        : linear.runs_dequantized(gemm) ? std::string("high_precision_dequantized")
                                        : std::string("high_precision");
  }
  return plans;
}

}  // namespace

namespace {

RunRecord base_record(const RunRequest& request, const Workload& workload,
                      const std::string& run_id, const char* kind) {
  auto record = record_head(request, run_id, kind);
  record.workload_description = workload.description();
  record.started_at = now_utc();
  const auto facts = workload_facts(request.workload, workload);
  record.workload_name = facts.name;
  record.other["workload_options"] = facts.options;
  record.parameter_count = facts.parameter_count;
  record.non_embedding_parameter_count = facts.non_embedding_parameter_count;
  add_instability_rule(record, request);
  return record;
}

// The training options a request sets.
TrainingOptions training_options(const RunRequest& request) {
  TrainingOptions options;
  options.seed = static_cast<std::uint64_t>(request.seed);
  options.steps = request.steps;
  options.layer_stats_every = request.layer_stats_every;
  options.instability = request.instability;
  if (request.recipe && !recipes::is_default(request.recipe->optimizer_states)) {
    options.optimizer_precision = recipes::optimizer_precision(request.recipe->optimizer_states);
  }
  return options;
}

}  // namespace

void use_one_torch_thread() {
  at::set_num_threads(1);
  try {
    at::set_num_interop_threads(1);
  } catch (const std::exception&) {
    // Already set, or inter-op work has started in this process: intra-op is what matters here.
  }
}

RunRecord failed_record(const RunRequest& request, const std::string& run_id,
                        const std::string& kind, const std::string& message,
                        const RunIdentity& identity) {
  auto record = record_head(request, run_id, kind.c_str());
  record.status = std::string("failed");
  record.error = message;
  record.finished_at = now_utc();
  identity.apply_to(record);
  return record;
}

RunRecord record_run(const ResultsDirectory& directory, const RunRequest& request,
                     const std::string& run_id, const std::string& kind,
                     const RunIdentity& identity, const std::function<void(RunRecord&)>& body) {
  RunRecord record;
  try {
    body(record);
  } catch (const IoError&) {
    throw;  // an error, not a result: no record (run_errors.hpp)
  } catch (const NotARegularFile&) {
    throw;  // a planted link or FIFO in the results directory: bad input
  } catch (const std::exception& e) {
    // c10::Error's what() carries a backtrace: the record keeps the message only.
    const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
    record = failed_record(request, run_id, kind,
                           torch_error ? torch_error->what_without_backtrace() : e.what(),
                           identity);
  }
  write_run_record(directory, record);
  return record;
}

RunRecord execute_baseline(const ResultsDirectory& directory, const RunRequest& request) {
  if (is_python_workload(request.workload))
    return execute_python_run(directory, request, "baseline");
  const auto run_id = baseline_run_id(request);
  return record_run(directory, request, run_id, "baseline", {}, [&](RunRecord& record) {
    const auto workload = make_workload(request.workload);
    record = base_record(request, *workload, run_id, "baseline");
    TrainingOptions options = training_options(request);
    options.keep_snapshots = true;
    options.stop_when_unstable = false;  // the runs of its seed compare with every step
    const auto backend = make_backend(request.backend);
    const auto device = device_for(request.backend);
    const auto hooks = baseline_hooks(request.high_precision, backend, device, what_if_of(request));
    const auto probes = RunProbes::for_baseline(request, *workload, options);
    const auto result = train(*workload, hooks, options, nullptr);
    add_training(record, result, nullptr);
    add_layer_stats_sidecar(record, directory, run_id, result);
    probes.add_sidecar(record, directory, run_id);
    add_threads(record, request);
    add_shadow_check(record, *backend);
    const auto probe = time_training_steps(
        *workload,
        {baseline_hooks(request.high_precision, timing_backend(request.backend, backend), device),
         plain_torch_hooks(device)},
        static_cast<std::uint64_t>(request.seed), request.timing_steps);
    const double fp32 = probe[1];
    auto& tp = record.throughput.set();
    tp.baseline_step_seconds = probe[0];
    tp.fp32_step_seconds = fp32;
    tp.step_time_over_fp32 = fp32 > 0 ? probe[0] / fp32 : 0.0;
    add_baseline_archive(record, directory, run_id, result);
    record.finished_at = now_utc();
  });
}

RunRecord execute_fp8_run(const ResultsDirectory& directory, const RunRequest& request) {
  if (is_python_workload(request.workload)) {
    // fp8lab.sweep's Python trainer steps torch's AdamW: it has no stored-state precision.
    if (!recipes::is_default(request.recipe.value().optimizer_states)) {
      auto refused = failed_record(request, request.run_id, "fp8",
                                   "optimizer_states and master_weights are not built for the "
                                   "python workloads of fp8lab.sweep; use fp32 (the default)",
                                   recipe_identity(request));
      write_run_record(directory, refused);
      return refused;
    }
    return execute_python_run(directory, request, "fp8");
  }
  const auto& recipe = request.recipe.value();
  RunIdentity identity;  // the recipe fields, kept by a failed record once known
  return record_run(directory, request, request.run_id, "fp8", identity, [&](RunRecord& record) {
    identity = recipe_identity(request);
    const auto workload = make_workload(request.workload);
    record = base_record(request, *workload, request.run_id, "fp8");
    identity.apply_to(record);
    const auto baseline = finished_baseline(directory, request);
    const auto reference = load_reference(directory, baseline);
    TrainingOptions options = training_options(request);
    BackendChoice choice = request.backend;
    choice.run_seed = static_cast<std::uint64_t>(request.seed);  // SR and mx_rht draws
    const auto backend = make_backend(choice);
    const auto device = device_for(request.backend);
    const auto diagnostics =
        std::make_shared<RunDiagnostics>(recipe.autoswitch, request.inject_nan);
    auto hooks = fp8_hooks(recipe, request.high_precision, backend, device, what_if_of(request),
                           diagnostics);
    std::unique_ptr<ScheduleRun> schedule;  // a precision schedule's switches (schedule_run.hpp)
    if (!recipe.schedule.empty()) {
      schedule =
          std::make_unique<ScheduleRun>(recipe, options.steps.value_or(workload->schedule().steps));
      schedule->wrap(hooks);
    }
    const auto probes = RunProbes::for_fp8_run(request, *workload, *identity.recipe_label, options);
    if (schedule) schedule->wrap(options, probe_models(request, *workload));
    const auto result = train(*workload, hooks, options, &reference);
    add_training(record, result, &baseline);
    add_layer_stats_sidecar(record, directory, request.run_id, result);
    probes.add_sidecar(record, directory, request.run_id);
    diagnostics->add_to_record(record);
    if (schedule) {
      nlohmann::json parts = nlohmann::json::object();
      schedule->add_to_record(parts);
      add_record_fields(record, parts);
    }
    if (options.optimizer_precision) {
      add_record_fields(
          record, {{"optimizer_states",
                    optimizer_states_json(recipe.optimizer_states, result.optimizer_state_rows)}});
    }
    add_threads(record, request);
    add_shadow_check(record, *backend);
    // Throughput probes in this process, under the same load as the run itself; every arm on the
    // run's device (a GPU step over a GPU baseline step, never over a CPU one).
    const auto seed = static_cast<std::uint64_t>(request.seed);
    const auto timed = timing_backend(request.backend, backend);
    const auto probe = time_training_steps(
        *workload,
        {fp8_hooks(recipe, request.high_precision, timed, device),
         baseline_hooks(request.high_precision, timed, device), plain_torch_hooks(device)},
        seed, request.timing_steps);
    auto& tp = record.throughput.set();
    tp.probe_step_seconds = probe[0];
    tp.baseline_step_seconds = probe[1];
    tp.fp32_step_seconds = probe[2];
    tp.step_time_over_baseline = probe[1] > 0 ? probe[0] / probe[1] : 0.0;
    tp.step_time_over_fp32 = probe[2] > 0 ? probe[0] / probe[2] : 0.0;
    auto& fp8_layers = record.other["fp8_layers"] = nlohmann::json::array();
    // Which GEMMs of each FP8 Linear the plan runs in FP8 (keep_high_precision), before any
    // autoswitch: the ablation report reads the layers from here.
    auto& fp8_gemms = record.other["fp8_gemms"] = nlohmann::json::object();
    {
      // The K (inner dimension) of each GEMM that runs in FP8: fprop sums over in_features,
      // dgrad over out_features, wgrad over the rows of a step's batch (its tokens), so the
      // report can state the scale of every conclusion (issue 31 item 9).
      std::set<std::int64_t> fprop_k, dgrad_k, wgrad_k;
      const std::int64_t tokens = tp.tokens_per_step.value_or(0);
      auto converted = workload->make_model(seed);
      fp8_hooks(recipe, request.high_precision, backend, device).convert(*converted);
      for (const auto& item : converted->named_modules("", /*include_self=*/false)) {
        const auto* linear = dynamic_cast<const Fp8LinearImpl*>(item.value().get());
        if (linear == nullptr) continue;
        fp8_layers.push_back(item.key());
        auto gemms = nlohmann::json::array();
        for (const Gemm g : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
          if (!linear->runs_fp8(g)) continue;
          gemms.push_back(std::string(name(g)));
          (g == Gemm::kFprop   ? fprop_k
           : g == Gemm::kDgrad ? dgrad_k
                               : wgrad_k)
              .insert(g == Gemm::kFprop   ? linear->in_features()
                      : g == Gemm::kDgrad ? linear->out_features()
                                          : tokens);
        }
        fp8_gemms[item.key()] = std::move(gemms);
        if (!recipe.per_role.empty()) {
          record.other["fp8_plans"][item.key()] = layer_plans_json(*linear, recipe, item.key());
        }
      }
      const auto as_vector = [](const std::set<std::int64_t>& k) {
        return std::vector<std::int64_t>(k.begin(), k.end());
      };
      record.gemm_k =
          std::map<std::string, std::vector<std::int64_t>>{{"fprop", as_vector(fprop_k)},
                                                           {"dgrad", as_vector(dgrad_k)},
                                                           {"wgrad", as_vector(wgrad_k)}};
    }
    record.finished_at = now_utc();
  });
}

RunRecord execute_null_run(const ResultsDirectory& directory, const RunRequest& request) {
  const bool per_step = request.null_arm == recipes::NullArm::per_step;
  const auto run_id = null_run_id(baseline_run_id(request), request.null_arm);
  RunIdentity identity;
  identity.baseline_run_id = baseline_run_id(request);
  identity.null_arm = std::string(recipes::null_arm_name(request.null_arm));
  identity.perturbation = per_step ? per_step_perturbation(request.null_noise)
                                   : std::string(kNullPerturbation);
  identity.recipe_label = per_step ? per_step_label(request.null_noise)
                                   : std::string(kNullRunLabel);
  if (is_python_workload(request.workload)) {
    if (!per_step) return execute_python_run(directory, request, "null");
    // fp8lab.sweep's Python trainer has no operand noise yet (docs/python.md, "Not built yet").
    auto refused = failed_record(request, run_id, "null",
                                 "the per_step null arm is not built for the python workload of "
                                 "fp8lab.sweep; use null_runs: [once]",
                                 identity);
    write_run_record(directory, refused);
    return refused;
  }
  return record_run(directory, request, run_id, "null", identity, [&](RunRecord& record) {
    const auto workload = make_workload(request.workload);
    record = base_record(request, *workload, run_id, "null");
    identity.apply_to(record);
    const auto baseline = finished_baseline(directory, request);
    const auto reference = load_reference(directory, baseline);
    TrainingOptions options;
    options.seed = static_cast<std::uint64_t>(request.seed);
    options.steps = request.steps;
    options.instability = request.instability;
    const auto backend = make_backend(request.backend);
    auto hooks = baseline_hooks(request.high_precision, backend, device_for(request.backend));
    const auto convert = hooks.convert;
    auto noises = std::make_shared<std::vector<std::shared_ptr<const OperandNoise>>>();
    hooks.convert = [convert, per_step, noises, &request](TrainableModel& model) {
      convert(model);
      if (per_step) {
        *noises = attach_operand_noise(model, request.null_noise,
                                       static_cast<std::uint64_t>(request.seed), "null_noise");
      } else {
        round_parameters_to_bf16(model);
      }
    };
    add_training(record, train(*workload, hooks, options, &reference), &baseline);
    // How large the per-step noise was (the record says how it was sized).
    if (per_step) record.other["null_noise"] = operand_noise_summary(*noises, request.null_noise);
    add_threads(record, request);
    record.finished_at = now_utc();
  });
}

}  // namespace fp8lab::experiments
