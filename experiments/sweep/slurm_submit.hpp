// `fp8lab sweep --slurm`: writes the array job's script (slurm_script.hpp) into --out and submits
// it. This file and the tests are the only places that talk to Slurm, and only through its
// commands (docs/architecture.md, "Where the scheduler sits"): fp8lab runs `sbatch --parsable`;
// following a job (squeue) and cancelling it (scancel) are the user's, as the script's comment
// says. No LibTorch.
#pragma once

#include <filesystem>
#include <string>

#include "experiments/sweep/slurm_script.hpp"

namespace fp8lab::experiments {

struct SlurmSubmission {
  std::filesystem::path script;  // DIR/slurm/sweep.sbatch
  std::string job_id;            // what sbatch printed; empty when only the script was written
  // Said with the job id: --out is on a tmpfs, which array tasks on other nodes cannot see.
  std::string warning;
};

// Creates DIR/slurm (and DIR) from this machine, before anything is written or submitted: a --out
// that a #SBATCH line cannot hold (slurm_output_problem) or that this machine cannot create or
// write stops here. Throws std::invalid_argument naming --out.
void create_slurm_directory(const std::filesystem::path& output);

// Writes the script into array.output (create_slurm_directory first), then, when `submit`, runs `sbatch --parsable SCRIPT`
// (sbatch found on PATH; its output kept in DIR/slurm/sbatch.log) and returns the job id it
// printed. Throws std::invalid_argument naming --out when the script cannot be written there
// (nothing is submitted), and std::runtime_error with sbatch's own words when sbatch is missing,
// fails, or prints no job id.
SlurmSubmission submit_slurm_array(const SlurmArray& array, const SlurmSettings& settings,
                                   bool submit);

}  // namespace fp8lab::experiments
