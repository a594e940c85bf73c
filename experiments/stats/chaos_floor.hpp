// The chaos floor (issue 20 §2, issue 31 §6): how far a perturbation that is not FP8 moves a run
// from its baseline on the same seed, measured directly by the null runs (kind "null",
// experiments/run/null_run.hpp), one floor per baseline family and null arm
// (recipes/null_arms.hpp): `once` (the initial weights rounded once to bf16) and `per_step`
// (every GEMM operand of every step plus noise as large as an FP8 recipe's quantization error).
// Shown beside each verdict: an FP8 recipe whose paired error is no larger than the null run's
// moved the run no more than a perturbation of that kind would.
//
// Which floor a verdict is read against: its family's per_step floor where the sweep ran that arm
// (FP8 perturbs every step, so the once floor understates the chaos an FP8 run starts), else the
// once floor; the report names the arm beside each floor. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/paired_statistics.hpp"

namespace fp8lab::experiments {

struct ChaosFloor {
  std::string workload;
  std::string arm = "once";          // the null runs' "null_arm" (records before it: once)
  std::string perturbation;          // the null runs' "perturbation" field
  std::vector<std::int64_t> seeds;   // of the finished null runs, in seed order
  std::vector<double> tail_errors;   // their tail relative errors (paired_verdicts.hpp)
  std::optional<MeanInterval> tail;  // over >= 2 seeds

  // "+0.41% [-1.2%, +2.0%] (n=3), sd 0.65%" or "1 null seed: +0.3% (no interval)".
  std::string describe() const;
  // The same in a table cell's few characters, with the arm: "per_step: sd 0.65% (n=3)".
  std::string cell() const;
};

class ChaosFloors {
 public:
  explicit ChaosFloors(const std::vector<RunRecord>& records);
  // The floor a verdict of the baseline family an FP8 run was compared with is read against (the
  // per_step arm's when it has a finished null run, else the once arm's); nullptr without null
  // runs.
  const ChaosFloor* of(const RunRecord& record) const;
  // Every floor, by family, once before per_step.
  std::vector<const ChaosFloor*> all() const;

 private:
  // (baseline family (noise_floor.hpp), arm) -> floor
  std::map<std::pair<std::string, std::string>, ChaosFloor> families_;
};

}  // namespace fp8lab::experiments
