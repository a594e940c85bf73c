#include "experiments/sweep/run_job.hpp"

#include <stdexcept>

#include "experiments/results/results_files.hpp"
#include "recipes/complete_recipe.hpp"
#include "recipes/error.hpp"
#include "recipes/schedule.hpp"

namespace fp8lab::experiments {
namespace {

[[noreturn]] void bad_job(const std::filesystem::path& path, const std::string& problem) {
  throw std::runtime_error(path.string() + ": not a job file of fp8lab sweep (" + problem + ")");
}

// A precision schedule's later stages (recipes/schedule.hpp), each where it starts and its
// complete recipe text (null: high precision).
nlohmann::json schedule_json(const recipes::Recipe& recipe) {
  auto stages = nlohmann::json::array();
  for (const auto& s : recipe.schedule) {
    nlohmann::json stage{{"is_fraction", s.start.is_fraction},
                         {"fraction", s.start.fraction},
                         {"step", s.start.step}};
    if (s.start.on_signal && s.start.grad_noise_below > 0) {
      stage["grad_noise_below"] = s.start.grad_noise_below;
      stage["every"] = s.start.every;
      if (recipes::names_consecutive(s.start)) stage["consecutive"] = s.start.consecutive;
    } else if (s.start.on_signal) {
      stage["underflow_above"] = s.start.underflow_above;
    }
    stage["recipe"] = s.recipe ? nlohmann::json(recipes::complete_recipe_text(*s.recipe))
                               : nlohmann::json(nullptr);
    stages.push_back(std::move(stage));
  }
  return stages;
}

void read_schedule(const nlohmann::json& stages, recipes::Recipe& recipe, const std::string& file) {
  for (const auto& stage : stages) {
    recipes::ScheduleStage s;
    s.start.is_fraction = stage.at("is_fraction").get<bool>();
    s.start.fraction = stage.at("fraction").get<double>();
    s.start.step = stage.at("step").get<std::int64_t>();
    if (stage.contains("underflow_above")) {  // until_signal (absent in older job files)
      s.start.on_signal = true;
      s.start.underflow_above = stage.at("underflow_above").get<double>();
    }
    if (stage.contains("grad_noise_below")) {
      s.start.on_signal = true;
      s.start.grad_noise_below = stage.at("grad_noise_below").get<double>();
      s.start.every = stage.at("every").get<std::int64_t>();
      s.start.consecutive =
          stage.value("consecutive", recipes::kDefaultGradNoiseConsecutive);  // absent: 1
    }
    if (!stage.at("recipe").is_null()) {
      s.recipe = std::make_shared<const recipes::Recipe>(
          recipes::parse_complete_recipe_text(stage.at("recipe").get<std::string>(), file));
    }
    recipe.schedule.push_back(std::move(s));
  }
}

}  // namespace

std::filesystem::path run_job_path(const ResultsDirectory& directory, const std::string& run_id) {
  check_run_id(run_id);
  return directory.root() / "jobs" / (run_id + ".json");
}

void write_run_job(const ResultsDirectory& directory, const RunRequest& request) {
  const auto& recipe = request.recipe.value();
  nlohmann::json job{{"schema", "fp8lab.job"},
                     {"run_id", request.run_id},
                     {"workload", request.workload},
                     {"seed", request.seed},
                     {"recipe", recipes::complete_recipe_text(recipe)},
                     {"recipe_canonical", recipes::canonical_string(recipe)},
                     {"provenance", request.provenance}};
  if (!recipe.schedule.empty()) job["schedule"] = schedule_json(recipe);
  check_run_id(request.run_id);
  write_results_file(directory, std::filesystem::path("jobs") / (request.run_id + ".json"),
                     job.dump() + "\n");
}

void read_run_job(const std::filesystem::path& path, RunRequest& request) {
  const auto text = read_regular_file(path);  // a FIFO or a device there is named (no_follow.hpp)
  if (!text) throw std::runtime_error("cannot read " + path.string() + ": it does not exist");
  nlohmann::json job;
  try {
    job = nlohmann::json::parse(*text);
    if (job.value("schema", "") != "fp8lab.job") bad_job(path, "schema is not fp8lab.job");
    request.run_id = job.at("run_id").get<std::string>();
    request.workload = job.at("workload").get<std::string>();
    request.seed = job.at("seed").get<std::int64_t>();
    request.recipe =
        recipes::parse_complete_recipe_text(job.at("recipe").get<std::string>(), path.string());
    if (job.contains("schedule")) read_schedule(job["schedule"], *request.recipe, path.string());
    request.provenance = job.at("provenance");
  } catch (const nlohmann::json::exception& e) {
    bad_job(path, e.what());
  } catch (const recipes::RecipeError& e) {
    bad_job(path, e.what());
  }
  if (recipes::canonical_string(*request.recipe) != job["recipe_canonical"]) {
    bad_job(path, "its recipe reads back as " + recipes::canonical_string(*request.recipe) +
                      ", not as the canonical recipe " + job["recipe_canonical"].dump());
  }
}

}  // namespace fp8lab::experiments
