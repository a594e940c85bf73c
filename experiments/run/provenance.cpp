#include "experiments/run/provenance.hpp"

#include <algorithm>
#include <filesystem>

#include "experiments/build_info.hpp"

namespace fp8lab::experiments {
namespace {

nlohmann::json quirks_json(const std::vector<recipes::Quirk>& quirks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& q : quirks) out.push_back(quirk_json(q));
  return out;
}

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

}  // namespace

nlohmann::json build_provenance() {
  const auto dirty = git_dirty();
  return {{"fp8lab_version", std::string(fp8lab_version())},
          {"git_commit", std::string(git_commit())},
          {"git_dirty", dirty ? nlohmann::json(*dirty) : nlohmann::json(nullptr)}};
}

nlohmann::json quirk_json(const recipes::Quirk& q) {
  return {{"field", q.field},
          {"asked", q.asked},
          {"runs", q.runs},
          {"why", q.why},
          {"reference", q.reference}};
}

nlohmann::json upstream_json(const recipes::Compatibility& c, recipes::RunsAs runs_as) {
  const bool asked = runs_as == recipes::RunsAs::asked;
  // Without FP8 there is no FP8 recipe whose fields could change.
  const bool fp8 = !c.trains_without_fp8.has_value();
  return {{"runner", c.runner},
          {"runnable", c.runnable},
          {"trains_fp8", fp8},
          {"would_change",
           asked && fp8 ? quirks_json(recipes::field_changes(c)) : nlohmann::json::array()},
          {"refusal", asked ? text_or_null(recipes::refusal(c)) : nlohmann::json(nullptr)},
          {"quirks", quirks_json(c.quirks)}};
}

nlohmann::json single_run_provenance(const recipes::RunSource& source, recipes::RunsAs runs_as,
                                     const recipes::RecipeToRun& to_run) {
  return {{"source",
           {{"kind", std::string(name(source.kind))},
            {"path", text_or_null(source.path)},
            {"text", source.text}}},
          {"runs_as", std::string(name(runs_as))},
          {"changed_fields", quirks_json(to_run.changed_fields)},
          {"upstream", upstream_json(source.compatibility, runs_as)}};
}

nlohmann::json sweep_run_provenance(const recipes::SweepExpansion& e, const recipes::SweepRun& run,
                                    const std::string& sweep_text) {
  nlohmann::json labels = nlohmann::json::array(), indices = nlohmann::json::array();
  // Each change once, with the requests it applies to (requests of one run may differ in what
  // upstream changed, e.g. one asked max and one most_recent).
  nlohmann::json changed = nlohmann::json::array();
  for (const std::size_t i : run.requests) {
    const auto& request = e.requested[i];
    const auto label = recipes::request_label(e.sweep, request);
    labels.push_back(label);
    indices.push_back(i + 1);
    for (const auto& q : request.changed_fields) {
      auto entry = quirk_json(q);
      auto it = std::find_if(changed.begin(), changed.end(), [&](const nlohmann::json& c) {
        for (const char* key : {"field", "asked", "runs", "why", "reference"}) {
          if (c[key] != entry[key]) return false;
        }
        return true;
      });
      if (it == changed.end()) {
        entry["combinations"] = nlohmann::json::array();
        changed.push_back(std::move(entry));
        it = changed.end() - 1;
      }
      (*it)["combinations"].push_back(label);
    }
  }
  const auto runs_as = e.sweep.runs_as;
  // Upstream: the peer's view of what was asked (the run's recipe is already its answer); asked:
  // of the recipe the run executes.
  const auto& settings =
      runs_as == recipes::RunsAs::upstream ? e.requested[run.requests.front()].recipe : run.recipe;
  nlohmann::json provenance{
      {"source",
       {{"kind", "sweep"},
        {"path", std::filesystem::absolute(e.sweep.file).lexically_normal().string()},
        {"text", sweep_text},
        {"combinations", labels},
        {"request_indices", indices}}},
      {"runs_as", std::string(name(runs_as))},
      {"changed_fields", changed},
      {"upstream", upstream_json(recipes::compatibility(settings), runs_as)}};
  // method: ablate: the arms this run stands for (one, unless two arms are the same run) and the
  // recipe they ablate, which groups them in the report (experiments/stats/ablation.hpp).
  nlohmann::json arms = nlohmann::json::array();
  for (const std::size_t i : run.requests) {
    const auto& arm = e.requested[i].ablation;
    if (!arm) continue;
    nlohmann::json entry{{"kind", arm->kind},
                         {"layer", arm->layer},
                         {"gemm", arm->gemm ? sim::scaling::to_string(*arm->gemm) : "all"}};
    if (std::find(arms.begin(), arms.end(), entry) == arms.end()) arms.push_back(std::move(entry));
  }
  if (!arms.empty()) {
    provenance["ablation"] = {{"base_recipe", e.ablation_base}, {"arms", std::move(arms)}};
  }
  return provenance;
}

nlohmann::json recipe_provenance(const recipes::Recipe& recipe) {
  return {{"source",
           {{"kind", "settings"}, {"path", nullptr}, {"text", recipes::canonical_string(recipe)}}},
          {"runs_as", "asked"},
          {"changed_fields", nlohmann::json::array()},
          {"upstream", upstream_json(recipes::compatibility(recipe), recipes::RunsAs::asked)}};
}

nlohmann::json baseline_provenance() {
  return {{"source", {{"kind", "baseline"}, {"path", nullptr}, {"text", nullptr}}},
          {"runs_as", "asked"},
          {"changed_fields", nlohmann::json::array()},
          {"upstream", nullptr}};
}

}  // namespace fp8lab::experiments
