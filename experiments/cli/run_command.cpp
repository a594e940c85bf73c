// fp8lab run: one workload x one recipe, against the workload's high-precision baseline (run first
// when the output directory has none), then the reports of the output directory.
//
//   fp8lab run --workload gpt-tiny --recipe my_recipe.yaml [--seed 0] [--out DIR]
//   fp8lab run --workload mlp-outliers --set fp8_format=E4M3 --set margin=2
//   fp8lab run --workload gpt-small --recipe accelerate_config.yaml --as upstream
//   ACCELERATE_FP8_FORMAT=E4M3 fp8lab run --workload gpt-tiny --env [--as upstream]
//
// --recipe takes an fp8lab recipe file or an accelerate config (as `fp8lab explain` does); --env
// reads accelerate's ACCELERATE_FP8_* variables (as `fp8lab explain --env` does); --as upstream
// runs what accelerate + TE / torchao really run for them (recipes/runs_as.hpp). The run record
// stores the source, its text and what upstream mode changed (experiments/run/provenance.hpp).
//
// The sweep runs each of its runs through this command in a child process (--job FILE --run-id
// ID, the run as the sweep hands it over: experiments/sweep/run_job.hpp; --baseline-only for
// baselines): see experiments/sweep/sweep_driver.hpp.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/command_exit.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/cli/export_inputs.hpp"
#include "experiments/cli/option_checks.hpp"
#include "experiments/cli/process_environment.hpp"
#include "experiments/cli/shared_options.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/linear/what_if.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/run/null_run.hpp"
#include "experiments/run/probe_recipes.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/python_run.hpp"
#include "experiments/run/run_diagnostics.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/run/run_ids.hpp"
#include "experiments/sweep/parallelism.hpp"
#include "experiments/sweep/run_errors.hpp"
#include "experiments/sweep/run_job.hpp"
#include "experiments/workloads/registry.hpp"
#include "experiments/workloads/workload_catalog.hpp"
#include "recipes/error.hpp"
#include "recipes/instability_rule.hpp"
#include "recipes/probe_settings.hpp"
#include "recipes/run_source.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments::cli {
namespace {

struct RunArguments {
  std::string workload;
  std::vector<std::string> workload_settings;
  std::string recipe_file;
  std::vector<std::string> settings;
  bool from_environment = false;
  std::int64_t seed = 0;
  std::string out = "runs/run";
  std::int64_t steps = 0;
  std::string high_precision = "fp32";
  std::string job_file;
  std::string run_id;
  bool baseline_only = false;
  bool null_run = false;
  std::string null_arm = "once";  // recipes/null_arms.hpp
  std::string null_noise;         // empty: recipes::kDefaultNullNoise (per_step only)
  std::string backend = "sim";
  std::int64_t shadow_every = 0;
  std::int64_t layer_stats_every = 0;
  std::vector<std::string> what_if;
  // The on-trajectory probes (recipes/probe_settings.hpp); probe_every 0: the default with
  // --probe, else off.
  std::vector<std::string> probes;
  std::int64_t probe_every = 0;
  std::string probe_attribution = "first_middle_last";
  std::int64_t probe_draws = recipes::kDefaultProbeDraws;
  std::string instability;  // recipes/instability_rule.hpp's text form; empty: the default
  std::string inject_nan;
  int threads = 0;  // 0: every core this process may use (parallelism.hpp)
  std::string runs_as = "asked";
  bool list_workload_options = false;
  std::string export_inputs;  // a directory: export the workload's inputs and train nothing
};

// --set key=value... as the YAML of a recipe file, so that values are parsed, checked and
// reported exactly as in files; dotted keys (gemm.fprop) become nested mappings.
std::string settings_as_yaml(const std::vector<std::string>& settings) {
  std::string yaml;
  std::map<std::string, std::string> nested;
  for (const auto& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument("--set '" + s + "': expected key=value, e.g. --set margin=2");
    }
    const auto key = s.substr(0, eq), value = s.substr(eq + 1);
    if (const auto dot = key.find('.'); dot != std::string::npos) {
      auto& map = nested[key.substr(0, dot)];
      map.append(map.empty() ? "" : ", ").append(key.substr(dot + 1)).append(": ").append(value);
    } else {
      yaml.append(key).append(": ").append(value).append("\n");
    }
  }
  for (const auto& [parent, fields] : nested) {
    yaml.append(parent).append(": {").append(fields).append("}\n");
  }
  return yaml;
}

HighPrecision parse_high_precision(const std::string& text) {
  if (text == "fp32") return HighPrecision::fp32;
  if (text == "bf16") return HighPrecision::bf16;
  throw std::invalid_argument("--baseline-precision '" + text + "': accepted fp32, bf16");
}

// --inject-nan LAYER@STEP[:forward|backward] (backward when not said).
FaultInjection parse_fault(const std::string& text) {
  const std::string accepted =
      "LAYER@STEP[:forward|backward], e.g. blocks.0.mlp_fc@3:backward (a Linear's fully "
      "qualified name, a step index >= 0)";
  const auto at = text.rfind('@');
  if (at == std::string::npos || at == 0) {
    throw std::invalid_argument("--inject-nan '" + text + "': accepted " + accepted);
  }
  FaultInjection fault;
  fault.layer = text.substr(0, at);
  std::string step = text.substr(at + 1);
  if (const auto colon = step.find(':'); colon != std::string::npos) {
    const std::string pass = step.substr(colon + 1);
    if (pass != "forward" && pass != "backward") {
      throw std::invalid_argument("--inject-nan '" + text + "': pass '" + pass + "'; accepted " +
                                  accepted);
    }
    fault.backward = pass == "backward";
    step = step.substr(0, colon);
  }
  std::size_t used = 0;
  try {
    fault.step = std::stoll(step, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (step.empty() || used != step.size() || fault.step < 0) {
    throw std::invalid_argument("--inject-nan '" + text + "': step '" + step + "'; accepted " +
                                accepted);
  }
  return fault;
}

// --probe, --probe-every, --probe-attribution, --probe-draws; each probe recipe checked here.
recipes::ProbeSettings probe_settings(const RunArguments& a) {
  recipes::ProbeSettings probes;
  probes.site = {"--probe", 0};
  probes.field = "--probe";
  probes.recipes =
      list_items(a.probes, "--probe", "RECIPE[,RECIPE...], e.g. current,current:fp8_format=E5M2");
  for (const auto& word : probes.recipes) recipes::probe_recipe(word, probes.site, probes.field);
  probes.every = a.probe_every > 0        ? a.probe_every
                 : probes.recipes.empty() ? 0
                                          : recipes::kDefaultProbeEvery;
  const auto attribution = recipes::probe_attribution_named(a.probe_attribution);
  if (!attribution) {
    throw std::invalid_argument("--probe-attribution '" + a.probe_attribution + "': accepted " +
                                recipes::accepted_probe_attributions());
  }
  probes.attribution = *attribution;
  probes.draws = a.probe_draws;
  return probes;
}

int run(const RunArguments& a) {
  RunRequest request;
  request.high_precision = parse_high_precision(a.high_precision);
  if (a.steps > 0) request.steps = a.steps;
  request.backend = {a.backend, a.shadow_every, a.threads > 0 ? a.threads : available_cores()};
  validate(request.backend);
  request.layer_stats_every = a.layer_stats_every;
  request.what_if = list_items(a.what_if, "--what-if", "RECIPE[,RECIPE...], e.g. mxfp8,block");
  lower_what_if(request.what_if, "--what-if");  // refused here, before any training
  request.probes = probe_settings(a);
  if (!a.instability.empty()) {
    request.instability =
        recipes::parse_instability_rule_text(a.instability, {"--instability", 0}, "--instability");
  }
  const ResultsDirectory directory(a.out);
  // A link planted in place of runs/, baselines/, ... is refused before anything runs.
  check_results_subdirectories(directory);
  use_one_torch_thread();

  if (!a.job_file.empty()) {
    // One distinct run of a sweep, as the sweep handed it over (run_job.hpp).
    read_run_job(a.job_file, request);
    if (request.run_id != a.run_id) {
      throw std::invalid_argument("--job " + a.job_file + " holds run " + request.run_id +
                                  ", not --run-id " + a.run_id);
    }
    checked_probe_recipes(request.probes, request.workload);  // refused before any training
    // One line per execution in the run's log (the resume test counts them).
    std::printf("fp8lab run %s: started\n", request.run_id.c_str());
    std::fflush(stdout);
    const auto record = execute_fp8_run(directory, request);
    return record.status.value_or("") == "failed" ? 1 : 0;
  }

  request.workload = a.workload;  // canonical (the command's callback)
  request.seed = a.seed;
  checked_probe_recipes(request.probes, request.workload);  // refused before any training
  if (a.null_run) {
    const auto arm = recipes::null_arm_named(a.null_arm);
    if (!arm) {
      throw std::invalid_argument("--null-arm '" + a.null_arm + "': accepted " +
                                  recipes::accepted_null_arms());
    }
    if (!a.null_noise.empty() && *arm != recipes::NullArm::per_step) {
      throw std::invalid_argument("--null-noise '" + a.null_noise +
                                  "' sizes the per_step null arm: accepted with --null-arm "
                                  "per_step only");
    }
    request.null_arm = *arm;
    if (!a.null_noise.empty()) request.null_noise = a.null_noise;
    lower_what_if({request.null_noise}, "--null-noise");  // refused here, before any training
    std::printf("fp8lab run %s: started\n",
                null_run_id(baseline_run_id(request), request.null_arm).c_str());
    std::fflush(stdout);
    const auto record = execute_null_run(directory, request);
    return record.status.value_or("") == "failed" ? 1 : 0;
  }
  if (a.baseline_only) {
    std::printf("fp8lab run %s: started\n", baseline_run_id(request).c_str());
    std::fflush(stdout);
    const auto record = execute_baseline(directory, request);
    return record.status.value_or("") == "failed" ? 1 : 0;
  }
  if (!a.recipe_file.empty() + !a.settings.empty() + a.from_environment != 1) {
    throw std::invalid_argument("give the recipe as --recipe FILE, as --set key=value... or as "
                                "--env (the ACCELERATE_FP8_* variables), one of the three");
  }
  const recipes::RunsAs runs_as = recipes::parse_runs_as(a.runs_as, {"--as", 0}, "--as");
  const recipes::RunSource source =
      !a.recipe_file.empty() ? recipes::read_source_file(a.recipe_file)
      : a.from_environment   ? recipes::environment_source(process_environment())
                             : recipes::settings_source(settings_as_yaml(a.settings), "--set");
  const recipes::RecipeToRun to_run =
      recipes::recipe_to_run(source.compatibility, runs_as, source.site);
  // Inputs the peer never reads (a misspelt variable, accelerate's amax_history_length key): the
  // run goes on as the peer would, but a careful user wants to know before reading results.
  for (const auto& q : source.compatibility.quirks) {
    if (q.runs == "ignored") {
      std::fprintf(stderr, "fp8lab run: note: %s '%s' is ignored: %s\n", q.field.c_str(),
                   q.asked.c_str(), q.why.c_str());
    }
  }
  for (const auto& change : to_run.changed_fields) {
    std::printf("runs as upstream: %s\n", recipes::change_text(change).c_str());
  }
  if (const auto refused = recipes::refusal(source.compatibility);
      runs_as == recipes::RunsAs::asked && !refused.empty()) {
    std::fprintf(stderr, "fp8lab run: note: runs as asked, but %s\n", refused.c_str());
  }
  request.provenance = single_run_provenance(source, runs_as, to_run);
  request.recipe = to_run.recipe;
  request.run_id =
      fp8_run_id(recipes::sweep_run_id(*request.recipe, request.workload, request.seed),
                 request.steps, request.backend);
  if (!a.inject_nan.empty()) {
    // A faulty run must never stand for its recipe: its own id.
    request.inject_nan = parse_fault(a.inject_nan);
    request.run_id += "-injected";
    // The layer is checked here, before any training: a misspelt one is bad input (exit 2).
    const auto model = make_workload(request.workload)->make_model(0);
    check_injection_target(*request.inject_nan,
                           convert_model_to_high_precision(*model, make_backend({"sim", 0})));
  }
  const auto record = execute_fp8_run(directory, request);
  const auto status = record.status.value_or("");
  ReportOptions report;
  report.inputs = {a.out};
  const auto paths = write_reports(report);
  std::printf("run %s: %s", request.run_id.c_str(), status.c_str());
  if (status == "failed") std::printf(": %s", record.error.value_or("").c_str());
  std::printf("\n%s\n", paths.report_html.string().c_str());
  return status == "failed" ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "run", "Train one workload with one recipe beside its high-precision baseline and report");
  auto a = std::make_shared<RunArguments>();
  command
      ->add_option("--workload", a->workload,
                   "workload: gpt-tiny, gpt-small, llama-xs, llama-s, llama-m, mlp, "
                   "mlp-outliers, residual-mlp, user-example, or one your program "
                   "registered; NAME:key=value,... sets its options")
      ->check(workload_name());
  list_option(
      command->add_option("--workload-set", a->workload_settings,
                          "workload option as key=value (repeatable), e.g. --workload-set "
                          "d_model=384; fp8lab run --workload NAME --workload-options lists them"));
  command->add_flag("--workload-options", a->list_workload_options,
                    "list the options of --workload with their defaults and exit");
  command->add_option("--export-inputs", a->export_inputs,
                      "write --workload's initial parameters (--seed), its batches (--steps) and "
                      "its schedule into this directory as .npy and JSON, train nothing and exit");
  auto* recipe =
      command
          ->add_option("--recipe", a->recipe_file, "fp8lab recipe file or accelerate config (YAML)")
          ->check(CLI::ExistingFile);
  auto* set = list_option(command->add_option(
      "--set", a->settings, "recipe field as key=value (repeatable), instead of --recipe"));
  auto* environment = command->add_flag(
      "--env", a->from_environment,
      "read the recipe from accelerate's ACCELERATE_FP8_* variables of this process (no config "
      "file needed), instead of --recipe; fp8lab explain --env shows what they mean");
  recipe->excludes(set);
  environment->excludes(recipe)->excludes(set);
  auto* runs_as =
      command
          ->add_option("--as", a->runs_as,
                       "asked: the recipe as written; upstream: what accelerate + TE / torchao "
                       "really run for it (fp8lab explain lists the differences)")
          ->check(CLI::IsMember({"asked", "upstream"}))
          ->capture_default_str();
  command->add_option("--seed", a->seed, "training seed (parameters and data)")
      ->check(whole_number());
  command->add_option("--out", a->out, "output directory")
      ->check(output_directory())
      ->capture_default_str();
  add_steps_option(*command, a->steps, "override the workload's number of steps");
  add_baseline_precision_option(*command, a->high_precision)->capture_default_str();
  auto* job =
      command->add_option("--job", a->job_file, "(used by fp8lab sweep) the job file of --run-id");
  command->add_option("--run-id", a->run_id, "(used by fp8lab sweep) the run of --job")->needs(job);
  runs_as->excludes(job);  // a sweep's run has it from the sweep file's runs_as:
  auto* baseline_only = command->add_flag("--baseline-only", a->baseline_only,
                                          "run only the baseline of --workload and --seed");
  auto* null_run =
      command
          ->add_flag("--null-run", a->null_run,
                     "run a null recipe of --workload and --seed (the report's chaos floor): "
                     "the baseline with a perturbation that is not FP8 (--null-arm)")
          ->excludes(baseline_only);
  add_option_with(*command, null_run, "--null-arm", a->null_arm,
                  "once: the initial weights rounded once to bf16; per_step: every GEMM operand "
                  "of every step plus --null-noise's quantization error of it with random signs")
      ->capture_default_str();
  add_option_with(*command, null_run, "--null-noise", a->null_noise,
                  std::string("the what-if recipe whose quantization error sizes --null-arm "
                              "per_step's noise (default ") +
                      recipes::kDefaultNullNoise + ")");
  add_backend_option(*command, a->backend);
  add_shadow_every_option(*command, a->shadow_every, "");
  command
      ->add_option("--layer-stats-every", a->layer_stats_every,
                   "per-layer statistics into the run's Parquet sidecar every N-th step "
                   "(0: at the eval steps; docs/results-schema.md)")
      ->check(whole_number_at_least(0));
  list_option(
      command->add_option("--what-if", a->what_if,
                          "also measure these recipes' quantization of the same tensors, e.g. "
                          "--what-if mxfp8,block,rowwise (scalings other than delayed)"));
  list_option(command->add_option(
      "--probe", a->probes,
      "on-trajectory probes: the baseline also runs these recipes' forward and backward at its "
      "own weights and batch every --probe-every steps, e.g. --probe "
      "current,current:fp8_format=E5M2,mxfp8:mx_scale_mode=floor (SCALING[:FIELD=VALUE...])"));
  command
      ->add_option("--probe-every", a->probe_every,
                   "probe every N-th step and the last (default 10 with --probe); an FP8 run "
                   "with it also measures the exact step at its own weights")
      ->check(whole_number_at_least(1));
  command
      ->add_option("--probe-attribution", a->probe_attribution,
                   "when each probe's fprop-, dgrad- and wgrad-only variants run: "
                   "first_middle_last (probe steps), all, none")
      ->check(CLI::IsMember({"first_middle_last", "all", "none"}))
      ->capture_default_str();
  command
      ->add_option("--probe-draws", a->probe_draws,
                   "draws per probe step of a stochastic-rounding recipe")
      ->check(whole_number_at_least(1))
      ->capture_default_str();
  command->add_option(
      "--instability", a->instability,
      "the rule that makes a run unstable, e.g. loss_above=0.2,for_steps=1,after_step=200 "
      "(keys loss_above, over_running_min, for_steps, after_step; default "
      "over_running_min=10,for_steps=10,after_step=0; a sweep passes its instability: key)");
  command
      ->add_option("--inject-nan", a->inject_nan,
                   "(tests) write one NaN into a Linear's input or grad_output: "
                   "LAYER@STEP[:forward|backward]; the record's first_non_finite should name it")
      ->excludes(job)
      ->excludes(baseline_only);
  add_threads_option(*command, a->threads,
                     "threads of the sim GEMMs and quantizers (default: every core this "
                     "process may use; no bit of the run depends on it, its timings do)");
  command->callback([a] {
    finish_command(
        "fp8lab run",
        [&]() -> int {
          if (a->job_file.empty() && a->workload.empty()) {
            throw std::invalid_argument("--workload is required");
          }
          if (a->list_workload_options) {
            const auto name = parse_workload_spec(a->workload).name;
            std::printf("options of workload %s (--workload-set key=value):\n%s", name.c_str(),
                        describe_workload_options(workload_option_table(name)).c_str());
            return 0;
          }
          if (!a->export_inputs.empty()) {
            export_workload_inputs(
                canonical_workload(workload_spec_with(a->workload, a->workload_settings)),
                static_cast<std::uint64_t>(a->seed), a->steps, a->export_inputs);
            return 0;
          }
          if (a->job_file.empty()) {
            // Options checked, defaults dropped, before anything runs: the spec the run id and
            // the record carry.
            a->workload =
                is_python_workload(a->workload) && a->workload_settings.empty()
                    ? a->workload
                    : canonical_workload(workload_spec_with(a->workload, a->workload_settings));
          } else if (!a->workload_settings.empty()) {
            throw std::invalid_argument("--workload-set applies to --workload, not to --job runs");
          }
          return run(*a);
        },
        // An error, not a result (run_errors.hpp): the sweep reads the cause from this line.
        [](const IoError& e) { return error_line(e.cause(), e.what()); });
  });
}

}  // namespace fp8lab::experiments::cli
