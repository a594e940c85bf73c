// What a run record says about where its run came from (docs/results-schema.md, "Provenance"):
// the fp8lab build, the source of its settings (file, --set, environment, sweep) with its text,
// whether it ran as asked or as upstream, the fields upstream mode changed, and what accelerate +
// TE / torchao would do with the settings. The CLI builds it (it knows the source); the executor
// writes it into every record (run_executor.hpp). No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "recipes/compatibility.hpp"
#include "recipes/run_source.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments {

// {"fp8lab_version", "git_commit", "git_dirty"} of this binary (build_info.hpp).
nlohmann::json build_provenance();

// A change or quirk as {"field", "asked", "runs", "why", "reference"}.
nlohmann::json quirk_json(const recipes::Quirk& quirk);

// {"runner", "runnable", "trains_fp8", "would_change", "refusal", "quirks"}: for RunsAs::asked
// the recipe-field changes the peer would make (not applied) and its refusal, if any; for
// RunsAs::upstream, already applied, so would_change is empty and refusal null. quirks: every
// quirk `fp8lab explain` lists, including those that change no recipe field (an ignored key).
nlohmann::json upstream_json(const recipes::Compatibility& compatibility, recipes::RunsAs runs_as);

// {"source", "runs_as", "changed_fields", "upstream"} of one `fp8lab run`: its source (file,
// --set or environment), the mode and what recipe_to_run made of it.
nlohmann::json single_run_provenance(const recipes::RunSource& source, recipes::RunsAs runs_as,
                                     const recipes::RecipeToRun& to_run);

// The same for the distinct run `run` of a sweep read from `sweep_text`: source kind "sweep" with
// the labels (and 1-based indices, as in sweep.json) of the requests it stands for; with runs_as
// upstream the requests' changed fields, each once with the labels of the requests it applies to.
nlohmann::json sweep_run_provenance(const recipes::SweepExpansion& expansion,
                                    const recipes::SweepRun& run, const std::string& sweep_text);

// For an FP8 run whose caller gave no provenance (tests, library users): the recipe as "settings"
// (its canonical string as the text), run as asked.
nlohmann::json recipe_provenance(const recipes::Recipe& recipe);

// A baseline's: source kind "baseline", runs_as asked, nothing changed, upstream null.
nlohmann::json baseline_provenance();

}  // namespace fp8lab::experiments
