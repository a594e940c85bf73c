// The Catch2 main of the tests labelled slurm: they submit real array jobs to the one-node cluster
// that scripts/slurm-up starts (no mock of Slurm anywhere). Where it could not start, its status
// file says why: the test prints that reason and exits 77, which CTest reports as skipped, never as
// passed. Where it is up, SLURM_CONF points sbatch, squeue and scancel (and the jobs) at it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/cli.hpp"

int main(int argc, char** argv) {
  const char* dir_variable = std::getenv("FP8LAB_SLURM_DIR");
  const std::filesystem::path dir = dir_variable != nullptr ? dir_variable : "/tmp/fp8lab-slurm";
  std::string status = fp8lab::testing::read_text(dir / "status");
  while (!status.empty() && status.back() == '\n') status.pop_back();
  if (status.empty()) {
    std::printf("SKIPPED: no Slurm cluster: %s is absent (scripts/test runs scripts/slurm-up "
                "first; run it as root to start one)\n",
                (dir / "status").c_str());
    return 77;
  }
  if (status != "up") {
    std::printf("SKIPPED: scripts/slurm-up could not start Slurm: %s\n", status.c_str());
    return 77;
  }
  ::setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
  std::printf("Slurm: the cluster of scripts/slurm-up (SLURM_CONF=%s)\n",
              (dir / "slurm.conf").c_str());
  return Catch::Session().run(argc, argv);
}
