#include "experiments/run/python_run.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "experiments/results/io_error.hpp"
#include "experiments/results/no_follow.hpp"
#include "experiments/run/cpu_numerics.hpp"
#include "experiments/run/layer_stats_rows.hpp"
#include "experiments/run/null_run.hpp"
#include "experiments/run/run_record.hpp"
#include "recipes/instability_rule.hpp"
#include "recipes/recipe_text.hpp"

namespace fp8lab::experiments {
namespace {

// The model's description that fp8lab.sweep put in the environment (python_run.hpp).
nlohmann::json python_workload() {
  const char* text = std::getenv(kPythonWorkloadVariable);
  if (text == nullptr) {
    throw std::runtime_error(
        "workload python trains a PyTorch model that fp8lab.sweep names; "
        "FP8LAB_PYTHON_WORKLOAD is not set: run this sweep from Python with fp8lab.sweep");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("FP8LAB_PYTHON_WORKLOAD is not JSON: ") + e.what());
  }
}

// Python's json writes NaN and ±Infinity as strings here (fp8lab/_trainer.py, _number).
double number(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "NaN") return NAN;
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
  }
  throw std::runtime_error("the Python trainer's result has " + v.dump() +
                           " where a number is read");
}

// "input" / "fprop" as the trainer names them (name(Operand), name(Gemm)).
int operand_index(const std::string& text) {
  for (auto o : {Operand::kInput, Operand::kWeight, Operand::kGradOutput}) {
    if (name(o) == text) return static_cast<int>(o);
  }
  throw std::runtime_error("the Python trainer's result names tensor '" + text +
                           "'; accepted: input, weight, grad_output");
}
int gemm_index(const std::string& text) {
  for (auto g : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
    if (name(g) == text) return static_cast<int>(g);
  }
  throw std::runtime_error("the Python trainer's result names GEMM '" + text +
                           "'; accepted: fprop, dgrad, wgrad");
}

OperandStats operand_stats(const nlohmann::json& j) {
  OperandStats s;
  s.quantizations = j.at("quantizations").get<std::uint64_t>();
  s.amax = static_cast<float>(number(j.at("amax")));
  s.scale_min = static_cast<float>(number(j.at("scale_min")));
  s.scale_max = static_cast<float>(number(j.at("scale_max")));
  s.scale_inv_min = static_cast<float>(number(j.at("scale_inv_min")));
  s.scale_inv_max = static_cast<float>(number(j.at("scale_inv_max")));
  s.max_block_dynamic_range_log2 = number(j.at("max_block_dynamic_range_log2"));
  s.count = j.at("count").get<std::uint64_t>();
  s.saturated = j.at("saturated").get<std::uint64_t>();
  s.underflowed = j.at("underflowed").get<std::uint64_t>();
  s.nan = j.at("nan").get<std::uint64_t>();
  s.sqnr_elements = j.at("sqnr_elements").get<std::uint64_t>();
  s.signal_energy = number(j.at("signal_energy"));
  s.noise_energy = number(j.at("noise_energy"));
  s.moments.elements = j.at("moments_elements").get<std::uint64_t>();
  s.moments.s1 = number(j.at("moments_s1"));
  s.moments.s2 = number(j.at("moments_s2"));
  s.moments.s3 = number(j.at("moments_s3"));
  s.moments.s4 = number(j.at("moments_s4"));
  return s;
}

// A temporary directory for the request and the trainer's result, removed with this object.
struct ExchangeDirectory {
  std::filesystem::path path;
  ExchangeDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fp8lab-python-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw IoError("cannot create a temporary directory " + pattern, errno);
    }
    path = pattern;
  }
  ~ExchangeDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// Runs `python -m fp8lab._trainer REQUEST` and waits; the trainer dies with this process
// (PR_SET_PDEATHSIG), as runs die with their sweep (child_process.hpp). Its output goes to this
// process's (the run's log).
int run_trainer(const std::string& python, const std::filesystem::path& request) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed for the Python trainer");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    const std::string module = "fp8lab._trainer";
    const std::string path = request.string();
    ::execlp(python.c_str(), python.c_str(), "-m", module.c_str(), path.c_str(),
             static_cast<char*>(nullptr));
    std::fprintf(stderr, "fp8lab run: cannot start the Python trainer %s\n", python.c_str());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed for the Python trainer");
  }
  if (WIFSIGNALED(status)) {
    throw std::runtime_error("the Python trainer was killed by signal " +
                             std::to_string(WTERMSIG(status)));
  }
  return WEXITSTATUS(status);
}

torch::Tensor read_floats(const std::filesystem::path& path, std::int64_t offset,
                          std::int64_t count) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset * static_cast<std::int64_t>(sizeof(float)));
  auto t = torch::empty({count}, torch::kFloat);
  in.read(reinterpret_cast<char*>(t.data_ptr<float>()),
          count * static_cast<std::int64_t>(sizeof(float)));
  if (!in) throw std::runtime_error(path.string() + ": fewer floats than the parameters hold");
  return t;
}

// The trainer's flat weights then gradients at one step (fp8lab/_trainer.py, _snapshot).
ModelSnapshot read_snapshot(const std::filesystem::path& path, std::int64_t step,
                            std::int64_t parameters) {
  return {step, read_floats(path, 0, parameters), read_floats(path, parameters, parameters)};
}

// The trainer's result as train() returns one: the C++ loop's rules applied to the losses,
// statistics and snapshots the trainer measured (training.cpp). The instability rule is applied
// here, after the fact: a run that meets it ends at that step, as train() stops it there.
TrainingResult training_result(const nlohmann::json& r, const std::filesystem::path& exchange,
                               const RunRequest& request, bool baseline,
                               const BaselineReference* reference) {
  TrainingResult t;
  t.steps_planned = r.at("steps_planned").get<std::int64_t>();
  t.tokens_per_step = r.at("tokens_per_step").get<std::int64_t>();
  t.parameter_names = r.at("parameter_names").get<std::vector<std::string>>();
  t.train_seconds = number(r.at("train_seconds"));
  std::vector<double> seconds = r.at("step_seconds").get<std::vector<double>>();
  recipes::InstabilityWatch watch(request.instability);
  const auto losses = r.at("train_loss");
  std::int64_t completed = 0;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    const auto step = static_cast<std::int64_t>(i);
    const double loss = number(losses[i]);
    const bool trips = std::isfinite(loss) && !t.unstable_met_at_step && watch.observe(step, loss);
    t.train_steps.push_back(step);
    t.train_loss.push_back(loss);
    if (step_ends_run(t, step, loss, trips, &watch, /*stop_when_unstable=*/!baseline)) break;
    completed = step + 1;
  }
  t.steps_completed = completed;
  if (!seconds.empty()) {
    std::sort(seconds.begin(), seconds.end());
    t.median_step_seconds = seconds[seconds.size() / 2];
  }
  // Eval rows, and the steps whose statistics the record keeps (train(): the eval steps).
  std::vector<std::int64_t> eval_steps;
  for (const auto& e : r.at("eval")) {
    const auto step = e.at("step").get<std::int64_t>();
    if (step >= completed) continue;
    std::vector<double> batch_losses;
    double sum = 0.0;
    for (const auto& v : e.at("batch_losses")) {
      batch_losses.push_back(number(v));
      sum += batch_losses.back();
    }
    // The batches' losses stand for the examples (TrainableModel::example_losses): an FP8 run and
    // its baseline see the same eval batches, so their differences pair.
    t.eval.emplace_back(
        step, batch_losses.empty() ? NAN : sum / static_cast<double>(batch_losses.size()));
    t.eval_standard_error.push_back(standard_error(batch_losses));
    t.final_eval_example_losses = batch_losses;
    eval_steps.push_back(step);
  }
  // Statistics: the calls of one step merged per (layer, tensor, GEMM), layers in the order they
  // first ran.
  const auto every = request.layer_stats_every;
  const auto last = completed - 1;
  const auto record_row = [&](std::int64_t s) {
    return std::find(eval_steps.begin(), eval_steps.end(), s) != eval_steps.end();
  };
  const auto sidecar_row = [&](std::int64_t s) {
    return every > 0 ? s % every == 0 || s == last : record_row(s);
  };
  std::map<std::int64_t, std::vector<std::string>> layer_order;
  std::map<std::tuple<std::int64_t, std::string, int, int>, OperandStats> merged;
  for (const auto& call : r.at("layers")) {
    const auto step = call.at("step").get<std::int64_t>();
    if (step >= completed) continue;
    const auto layer = call.at("layer").get<std::string>();
    auto& order = layer_order[step];
    if (std::find(order.begin(), order.end(), layer) == order.end()) order.push_back(layer);
    const auto tensor = operand_index(call.at("tensor").get<std::string>());
    const auto gemm = gemm_index(call.at("gemm").get<std::string>());
    merged[{step, layer, tensor, gemm}].merge(operand_stats(call.at("stats")));
  }
  for (const auto& [step, layers] : layer_order) {
    for (const auto& layer : layers) {
      for (auto tensor : {Operand::kInput, Operand::kWeight, Operand::kGradOutput}) {
        for (auto role : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
          const auto it =
              merged.find({step, layer, static_cast<int>(tensor), static_cast<int>(role)});
          if (it == merged.end() || it->second.quantizations == 0) continue;
          if (record_row(step)) {
            auto row = layer_record_row(layer, tensor, role, it->second);
            row.step = step;
            t.layer_statistics.push_back(std::move(row));
          }
          if (sidecar_row(step)) {
            auto row = layer_stats_row(step, layer, tensor, role, kTrainedRecipe, it->second);
            t.layer_stats_rows.push_back(std::move(row));
          }
        }
      }
    }
  }
  // Snapshots: a baseline keeps them, a run is measured against the baseline's.
  std::map<std::int64_t, const ModelSnapshot*> reference_at;
  if (reference != nullptr) {
    for (const auto& s : reference->snapshots) reference_at[s.step] = &s;
  }
  const auto parameters = r.at("parameter_count_trained").get<std::int64_t>();
  for (const auto& s : r.at("snapshots")) {
    const auto step = s.at("step").get<std::int64_t>();
    if (step >= completed) continue;
    auto snap = read_snapshot(exchange / s.at("file").get<std::string>(), step, parameters);
    if (const auto it = reference_at.find(step); it != reference_at.end()) {
      t.divergence.emplace_back(step, relative_l2(snap.weights, it->second->weights),
                                relative_l2(snap.gradients, it->second->gradients));
    }
    if (baseline) t.snapshots.push_back(std::move(snap));
  }
  return t;
}

// What the record says of the model (the user's, not a registered workload).
void add_model(RunRecord& record, const nlohmann::json& workload, const nlohmann::json& r) {
  const auto model_class = r.at("model_class").get<std::string>();
  const auto count = r.at("parameter_count").get<std::int64_t>();
  record.workload_description = "PyTorch model " + model_class + " (" + std::to_string(count) +
                                " parameters) from " +
                                workload.value("model_fn", std::string("model_fn"));
  record.workload_name = std::string(kPythonWorkload);
  record.other["workload_options"] = nlohmann::json::object();
  record.parameter_count = count;
  record.non_embedding_parameter_count = Field<std::int64_t>::null();
  record.other["python_model"] = {{"class", model_class},
                                  {"parameter_count", count},
                                  {"model_fn", workload.value("model_fn", nlohmann::json())},
                                  {"data_fn", workload.value("data_fn", nlohmann::json())},
                                  {"eval_fn", workload.value("eval_fn", nlohmann::json())},
                                  {"torch", r.value("torch", nlohmann::json())}};
}

}  // namespace

bool is_python_workload(const std::string& spec) { return spec == kPythonWorkload; }

void check_python_workloads(const std::vector<std::string>& workloads, const std::string& file) {
  const bool from_python = std::getenv(kPythonWorkloadVariable) != nullptr;
  for (const auto& w : workloads) {
    if (from_python && !is_python_workload(w)) {
      throw std::invalid_argument(file + ": workloads: '" + w +
                                  "' under fp8lab.sweep, which trains your model; accepted: "
                                  "python (or leave workloads out)");
    }
    if (!from_python && is_python_workload(w)) {
      throw std::invalid_argument(file +
                                  ": workloads: 'python' trains a PyTorch model and runs "
                                  "from Python only: fp8lab.sweep(sweep, model_fn, data_fn, out)");
    }
  }
}

RunRecord execute_python_run(const ResultsDirectory& directory, const RunRequest& request,
                             const std::string& kind) {
  const auto baseline_id = baseline_run_id(request);
  const auto run_id = kind == "baseline" ? baseline_id
                      : kind == "null"   ? null_run_id(baseline_id)
                                         : request.run_id;
  RunIdentity identity;
  if (kind == "null") {
    identity.baseline_run_id = baseline_id;
    identity.perturbation = std::string(kNullPerturbation);
    identity.recipe_label = std::string(kNullRunLabel);
  }
  return record_run(directory, request, run_id, kind, identity, [&](RunRecord& record) {
    if (kind == "fp8") identity = recipe_identity(request);
    const auto workload = python_workload();
    if (request.high_precision != HighPrecision::fp32 || request.backend.name != "sim") {
      throw std::invalid_argument(
          "a Python model's runs take --baseline-precision fp32 and --backend sim only (its "
          "high-precision layers are torch's own)");
    }
    record = record_head(request, run_id, kind.c_str());
    record.started_at = now_utc();
    add_instability_rule(record, request);
    identity.apply_to(record);
    std::optional<RunRecord> baseline;
    std::optional<BaselineReference> reference;
    if (kind != "baseline") {
      baseline = finished_baseline(directory, request);
      reference = load_reference(directory, *baseline);
    }
    const ExchangeDirectory exchange;
    nlohmann::json ask{{"kind", kind},
                       {"run_id", run_id},
                       {"seed", request.seed},
                       {"steps", request.steps ? nlohmann::json(*request.steps) : nlohmann::json()},
                       {"layer_stats_every", request.layer_stats_every},
                       {"output", exchange.path.string()}};
    if (kind == "fp8" && !request.recipe->schedule.empty()) {
      throw std::invalid_argument(
          "schedule: precision schedules run on the C++ workloads only (experiments/run/"
          "schedule_run.hpp), not on the Python trainer's models");
    }
    if (kind == "fp8") ask["recipe"] = recipes::recipe_file_text(request.recipe.value());
    if (reference) {
      ask["parameter_names"] = reference->parameter_names;
      auto steps = nlohmann::json::array();
      for (const auto& s : reference->snapshots) steps.push_back(s.step);
      ask["snapshot_steps"] = steps;
    }
    const auto request_path = exchange.path / "request.json";
    std::ofstream(request_path) << ask.dump();
    const int status = run_trainer(workload.value("python", std::string("python3")), request_path);
    const auto text = read_regular_file(exchange.path / "result.json");
    if (!text) {
      throw std::runtime_error("the Python trainer exited with status " + std::to_string(status) +
                               " and left no result (its output is in the run's log)");
    }
    const auto result = nlohmann::json::parse(*text);
    if (result.contains("error")) throw std::runtime_error(result["error"].get<std::string>());
    add_model(record, workload, result);
    const auto t = training_result(result, exchange.path, request, kind == "baseline",
                                   reference ? &*reference : nullptr);
    add_training(record, t, baseline ? &*baseline : nullptr);
    add_layer_stats_sidecar(record, directory, run_id, t);
    add_threads(record, request);
    if (kind == "baseline") add_baseline_archive(record, directory, run_id, t);
    if (kind == "fp8") {
      auto& fp8_layers = record.other["fp8_layers"] = nlohmann::json::array();
      record.other["fp8_gemms"] = result.at("fp8_gemms");
      for (const auto& item : result.at("fp8_gemms").items()) fp8_layers.push_back(item.key());
    }
    record.finished_at = now_utc();
  });
}

}  // namespace fp8lab::experiments
