// Planning a sweep: its expansion into distinct runs and their ids, this shard's share, the jobs
// that still have to run (each needed baseline and null run once, then the unrecorded FP8 runs),
// and seeds: auto's planned seeds. What runs them is sweep_pool.hpp.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/sweep_driver.hpp"
#include "experiments/sweep/sweep_jobs.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments {

// The sweep's distinct runs, filed under this backend's and these steps' ids (run_ids.hpp: runs
// trained on the GPU are filed apart from CPU-trained ones, and runs of a --steps override apart
// from the workload's own steps), after checking its workloads and --heatmap axes.
// id_without_steps maps each id to the one it had before run ids named --steps.
recipes::SweepExpansion expand_sweep(const SweepOptions& options, const std::string& text,
                                     std::map<std::string, std::string>& id_without_steps);

// This shard's runs: those whose index in the expansion is shard_index modulo shard_count.
std::vector<const recipes::SweepRun*> shard_runs(const recipes::SweepExpansion& expansion,
                                                 const SweepOptions& options);

// The jobs of this shard; runs already recorded are counted in outcome.skipped.
Jobs plan_jobs(const SweepOptions& options, const ResultsDirectory& directory,
               const recipes::SweepExpansion& expansion,
               const std::vector<const recipes::SweepRun*>& shard, const std::string& text,
               const std::map<std::string, std::string>& id_without_steps, SweepOutcome& outcome);

// seeds: auto: each row planned from its pilot's records, printed, and the runs of its seeds
// beyond the pilot (ids as expand_sweep files them).
std::vector<recipes::SweepRun> planned_runs(const SweepOptions& options,
                                            const ResultsDirectory& directory,
                                            const recipes::SweepExpansion& expansion);

// seeds: auto plans a row from its whole pilot, which one sweep of the whole expansion runs:
// refused where `split` (--shard, --slurm) would split it.
void refuse_split_pilot(const SweepOptions& options, const recipes::Sweep& sweep, bool split);

// seeds: auto's checks before a sweep runs: not split by --shard, and a planner given.
void check_seed_planning(const SweepOptions& options, const recipes::Sweep& sweep);

}  // namespace fp8lab::experiments
