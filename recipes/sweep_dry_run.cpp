// A sweep's dry run (sweep.hpp: format_dry_run): the expanded grid, its distinct runs and the
// requests each stands for, as text.
#include <fmt/format.h>

#include <string>

#include "recipes/sweep.hpp"
#include "recipes/utf8.hpp"

namespace fp8lab::recipes {
namespace {

std::string run_text(const Sweep& sweep, const SweepRun& run) {
  std::string out;
  bool scaling_shown = false;
  for (const auto& param : sweep.parameters) {
    if (param.key == "scaling" || param.key == "use_mxfp8_block_scaling") scaling_shown = true;
    out += fmt::format(" {}={}", param.key, field_text(run.recipe, param.key));
  }
  if (!scaling_shown) out = fmt::format(" scaling={}", name(run.recipe.scaling)) + out;
  if (!run.recipe.schedule.empty()) out += "  schedule: " + schedule_label(run.recipe);
  return out;
}
}  // namespace

std::string format_dry_run(const SweepExpansion& e) {
  const Sweep& s = e.sweep;
  std::string sizes;
  for (const auto& p : s.parameters)
    sizes += fmt::format("{}{}", sizes.empty() ? "" : " x ", p.values.size());
  // The file name and name: as the user wrote them, but never raw terminal escapes (utf8.hpp).
  std::string out = fmt::format("sweep {}{}: method {}", printable(s.file),
                                s.name.empty() ? "" : " (" + printable(s.name) + ")",
                                s.method == SweepMethod::grid     ? "grid"
                                : s.method == SweepMethod::random ? "random"
                                                                  : "ablate");
  if (s.method == SweepMethod::random) out += fmt::format(", count {}, seed {}", s.count, s.seed);
  if (s.runs_as == RunsAs::upstream)
    out += "; runs as upstream (what accelerate + TE / torchao run)";
  out += fmt::format("\ngrid: {} parameters ({}) = {} combinations; workloads: {}; seeds: {}\n",
                     s.parameters.size(), sizes.empty() ? "none" : sizes, e.grid_size,
                     fmt::join(s.workloads, ", "), fmt::join(s.seeds, ", "));
  out += fmt::format("requested: {}   distinct runs: {}   (plus the high-precision baseline for "
                     "each workload and seed, which the runner always runs)\n\n",
                     e.requested.size(), e.runs.size());
  if (s.seed_planning.automatic) {
    out += fmt::format("seeds: auto: seeds {} are the pilot of every row; after them each row runs "
                       "the seeds its settling test needs for 80% power, at most seed_budget {} "
                       "(seeds {} to {}), planned from its pilot when the pilot has run\n\n",
                       fmt::join(s.seeds, ", "), s.seed_planning.budget, kPilotSeeds,
                       s.seed_planning.budget - 1);
  }
  if (!s.baseline_seeds.empty()) {
    out += fmt::format("baseline_seeds: {}: the baseline also runs on these seeds for each "
                       "workload (the report's seed-to-seed noise floor)\n\n",
                       fmt::join(s.baseline_seeds, ", "));
  }
  std::vector<std::string> arms;
  for (const NullArm arm : s.null_runs) {
    arms.push_back(arm == NullArm::per_step ? "per_step (sized by " + s.null_noise + ")"
                                            : null_arm_name(arm));
  }
  out += fmt::format("practical band of the paired verdicts: {}%{}\n\n", s.practical_band * 100,
                     arms.empty() ? ""
                                  : "; null runs (the chaos floor) on every workload and seed: " +
                                        fmt::format("{}", fmt::join(arms, ", ")));
  out += fmt::format("alpha of the report's named tests: {}\n", s.hypotheses.alpha);
  for (const auto& h : s.hypotheses.tests) {
    out += fmt::format("  pre-registered {}: {}\n", h.kind, fmt::join(h.labels, " vs "));
  }
  out += fmt::format("unstable (instability{}): {}\n",
                     s.instability.site.line > 0 ? "" : ", the default",
                     describe_instability_rule(s.instability));
  out += "\n";
  out += "distinct runs:\n";
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const auto& run = e.runs[i];
    const auto& arm = e.requested[run.requests.front()].ablation;
    out += fmt::format("  run {:>4}  {}  {} seed {}  stands for {} request(s):{}{}\n", i + 1,
                       run.id, run.workload, run.seed, run.requests.size(), run_text(s, run),
                       arm ? "  ablate: " + arm->label() : std::string());
  }
  out += "\nrequested combinations:\n";
  for (std::size_t i = 0; i < e.requested.size(); ++i) {
    const auto& r = e.requested[i];
    out += fmt::format("  #{:<5} {} seed {}  {}  -> run {}", i + 1, r.workload, r.seed,
                       request_label(s, r), r.run + 1);
    if (!r.reasons.empty()) out += fmt::format("  ({})", fmt::join(r.reasons, "; "));
    out += "\n";
  }
  return out;
}
}  // namespace fp8lab::recipes
