// Expanding a sweep (sweep.hpp: expand): its parameter combinations (grid, random draw or
// ablation arms, then the schedules), each canonicalized once, and the requests mapped to
// distinct runs; the run ids and labels of requests. Reading a sweep file is sweep.cpp, the dry
// run's text sweep_dry_run.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "recipes/canonical.hpp"
#include "recipes/detail/recipe_mapping.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::recipes {
namespace {

// What expanding one requested combination costs in memory, measured (a dry run's peak resident
// size over its requested combinations; sweep.hpp, "Limits"), and the budget expansion may use.
constexpr std::uint64_t kBytesPerRequest = 2300;  // 900,000 combinations: 2.04 GB peak
constexpr std::uint64_t kExpansionBudget = 2'000'000'000;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, n) without modulo bias.
std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t n) {
  const std::uint64_t limit = (~std::uint64_t{0}) - (~std::uint64_t{0}) % n;
  std::uint64_t x = splitmix64(state);
  while (x >= limit) x = splitmix64(state);
  return x % n;
}

// The grid indices of the parameter combinations to request, ascending.
std::vector<std::uint64_t> combination_indices(const Sweep& sweep, std::uint64_t grid) {
  std::vector<std::uint64_t> indices;
  if (sweep.method == SweepMethod::grid || static_cast<std::uint64_t>(sweep.count) >= grid) {
    indices.resize(grid);
    for (std::uint64_t i = 0; i < grid; ++i) indices[i] = i;
    return indices;
  }
  // Rejection sampling without replacement: count < grid, and both are bounded above.
  std::uint64_t state = sweep.seed;
  std::unordered_set<std::uint64_t> chosen;
  while (chosen.size() < static_cast<std::size_t>(sweep.count)) {
    chosen.insert(uniform_below(state, grid));
  }
  indices.assign(chosen.begin(), chosen.end());
  std::sort(indices.begin(), indices.end());
  return indices;
}

std::string run_key(const std::string& canonical_text, const std::string& workload,
                    std::int64_t seed) {
  return fmt::format("{};workload={};seed={}", canonical_text, workload, seed);
}

// The number of parameter combinations; RecipeError when it passes kMaxRequested.
std::uint64_t grid_size(const Sweep& sweep) {
  std::uint64_t grid = 1;
  for (const auto& p : sweep.parameters) {
    grid *= p.values.size();
    if (grid > kMaxRequested) {
      throw RecipeError({sweep.file, p.values.front().site.line}, "parameters." + p.key, "",
                        fmt::format("makes the grid larger than {} combinations", kMaxRequested),
                        "fewer values, or method: random with a count");
    }
  }
  return grid;
}

// One parameter combination, canonicalized once: workloads and seeds do not change the recipe.
struct Combination {
  std::vector<std::size_t> value_index;
  Recipe requested;
  Canonical canonical;  // of the recipe to run (runs_as), its reasons led by runs_as' changes
  std::vector<Quirk> changed_fields;  // runs_as upstream: RecipeToRun::changed_fields
  std::string canonical_text;
  std::optional<AblationArm> ablation;  // method: ablate
};

void complete_combination(const Sweep& sweep, const std::vector<FieldSetting>& settings,
                          Combination& c);

// The combination at grid index `index`; `settings` holds the sweep's base settings on entry and
// is reused (the parameters' settings are appended after them).
Combination combination_at(const Sweep& sweep, std::uint64_t index,
                           std::vector<FieldSetting>& settings) {
  Combination c;
  c.value_index.resize(sweep.parameters.size());
  settings.resize(sweep.base.size());
  // Mixed radix, last parameter fastest.
  for (std::size_t p = sweep.parameters.size(); p-- > 0;) {
    const std::size_t n = sweep.parameters[p].values.size();
    c.value_index[p] = static_cast<std::size_t>(index % n);
    index /= n;
  }
  for (std::size_t p = 0; p < sweep.parameters.size(); ++p) {
    settings.push_back(sweep.parameters[p].values[c.value_index[p]]);
  }
  complete_combination(sweep, settings, c);
  return c;
}

// The rest of a combination from its settings (base first): the recipe, what runs, canonical.
void complete_combination(const Sweep& sweep, const std::vector<FieldSetting>& settings,
                          Combination& c) {
  c.requested = resolve(settings, Strictness::sweep);
  RecipeToRun to_run{c.requested, {}};
  if (sweep.runs_as == RunsAs::upstream) {
    to_run = recipe_to_run(compatibility(c.requested), sweep.runs_as, sweep.runs_as_site,
                           "combination " + assignment_text(sweep, c.value_index) + ": ");
  }
  c.canonical = canonicalize(to_run.recipe);
  std::vector<std::string> changes;
  for (const Quirk& change : to_run.changed_fields) {
    changes.push_back("runs_as upstream: " + change_text(change));
  }
  c.canonical.reasons.insert(c.canonical.reasons.begin(), changes.begin(), changes.end());
  c.changed_fields = std::move(to_run.changed_fields);
  c.canonical_text = canonical_string(c.canonical.recipe);
}

// Every (workload, seed, combination) as a request, mapped to its distinct run (created by the
// first request that needs it); a request that asks for exactly a run another request already
// asked for says so.
void add_requests(SweepExpansion& out, const std::vector<Combination>& combinations) {
  std::unordered_map<std::string, std::size_t> run_of;
  // Per run: the first request that asked for exactly the run's canonical recipe (npos: none yet).
  constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::size_t> first_exact;
  for (const auto& workload : out.sweep.workloads) {
    for (const std::int64_t seed : out.sweep.seeds) {
      for (const auto& c : combinations) {
        RequestedCombination request;
        request.value_index = c.value_index;
        request.workload = workload;
        request.seed = seed;
        request.recipe = c.requested;
        request.reasons = c.canonical.reasons;
        request.changed_fields = c.changed_fields;
        request.ablation = c.ablation;
        const std::string key = run_key(c.canonical_text, workload, seed);
        const auto [it, inserted] = run_of.try_emplace(key, out.runs.size());
        if (inserted) {
          out.runs.push_back({c.canonical.recipe, workload, seed, fnv1a_hex(key), {}});
          first_exact.push_back(kNone);
          request.is_representative = true;
        }
        if (request.reasons.empty()) {
          std::size_t& first = first_exact[it->second];
          if (first == kNone) {
            first = out.requested.size();
          } else {
            request.reasons.push_back(fmt::format("same recipe as request #{}", first + 1));
          }
        }
        request.run = it->second;
        out.runs[it->second].requests.push_back(out.requested.size());
        out.requested.push_back(std::move(request));
      }
    }
  }
}
}  // namespace

std::string sweep_run_id(const Recipe& recipe, const std::string& workload, std::int64_t seed) {
  return fnv1a_hex(run_key(canonical_string(canonicalize(recipe).recipe), workload, seed));
}

SweepExpansion expand(const Sweep& sweep) {
  SweepExpansion out;
  out.sweep = sweep;
  const std::uint64_t grid = grid_size(sweep);
  out.grid_size = grid;
  const std::vector<std::uint64_t> indices = combination_indices(sweep, grid);
  const std::uint64_t total = indices.size() * sweep.workloads.size() * sweep.seeds.size();
  if (total > kMaxRequested) {
    throw RecipeError({sweep.file, 0}, "sweep", std::to_string(total),
                      "requests too many combinations:", fmt::format("at most {}", kMaxRequested));
  }
  // Memory estimate: expansion keeps every requested combination with its recipe (and a dry run
  // two lines of text for each); refused above the budget instead of paging a machine to death.
  const std::uint64_t estimate = total * kBytesPerRequest;
  if (estimate > kExpansionBudget) {
    throw RecipeError(
        {sweep.file, 0}, "sweep", std::to_string(total),
        fmt::format("requests too many combinations to expand: about {:.1f} GB at about {} bytes "
                    "each (measured), above the {:.1f} GB limit;",
                    static_cast<double>(estimate) / 1e9, kBytesPerRequest,
                    static_cast<double>(kExpansionBudget) / 1e9),
        fmt::format("at most {} combinations (fewer values, or method: random with a count)",
                    kExpansionBudget / kBytesPerRequest));
  }
  std::vector<Combination> combinations;
  std::vector<FieldSetting> settings = sweep.base;
  if (sweep.method == SweepMethod::ablate) {
    for (auto& arm : ablation_arms(sweep.ablate)) {
      settings.resize(sweep.base.size());
      settings.insert(settings.end(), arm.settings.begin(), arm.settings.end());
      Combination c;
      complete_combination(sweep, settings, c);
      if (arm.kind == "all") out.ablation_base = c.canonical_text;
      c.ablation = std::move(arm);
      combinations.push_back(std::move(c));
    }
    add_requests(out, combinations);
    return out;
  }
  combinations.reserve(indices.size());
  for (const std::uint64_t index : indices) {
    combinations.push_back(combination_at(sweep, index, settings));
  }
  out.requested.reserve(static_cast<std::size_t>(total));
  for (const Recipe& scheduled : sweep.schedules) {  // `schedules:`, after the grid
    Combination c;
    c.requested = scheduled;
    c.canonical = canonicalize(scheduled);
    c.canonical_text = canonical_string(c.canonical.recipe);
    combinations.push_back(std::move(c));
  }
  add_requests(out, combinations);
  return out;
}

std::string assignment_text(const Sweep& sweep, const std::vector<std::size_t>& value_index) {
  std::string out;
  for (std::size_t p = 0; p < sweep.parameters.size(); ++p) {
    const auto& param = sweep.parameters[p];
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", param.key,
                       field_text(param.values[value_index[p]].value));
  }
  return out.empty() ? "(base recipe)" : out;
}

std::string request_label(const Sweep& sweep, const RequestedCombination& request) {
  if (request.ablation) return "ablate: " + request.ablation->label();
  if (!request.recipe.schedule.empty()) return "schedule: " + schedule_label(request.recipe);
  return assignment_text(sweep, request.value_index);
}

std::vector<std::string> varied_fields(const SweepExpansion& expansion) {
  std::vector<std::string> varied;
  for (const auto& key : recipe_field_names()) {
    std::set<std::string> values;
    for (const auto& run : expansion.runs) values.insert(field_text(run.recipe, key));
    if (values.size() > 1) varied.push_back(key);
  }
  return varied;
}

}  // namespace fp8lab::recipes
