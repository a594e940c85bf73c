// The chaos floor (issue 20 §2): how far a perturbation that is not FP8 moves a run from its
// baseline on the same seed, measured directly by the null runs (kind "null",
// experiments/runner/null_run.hpp: the baseline with its initial weights rounded once to bf16).
// Shown beside each verdict: an FP8 recipe whose paired error is no larger than the null run's
// moved the run no more than any tiny perturbation would. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/report/paired_statistics.hpp"

namespace fp8lab::experiments {

struct ChaosFloor {
  std::string workload;
  std::string perturbation;          // the null runs' "perturbation" field
  std::vector<std::int64_t> seeds;   // of the finished null runs, in seed order
  std::vector<double> tail_errors;   // their tail relative errors (paired_verdicts.hpp)
  std::optional<MeanInterval> tail;  // over >= 2 seeds

  // "+0.41% [-1.2%, +2.0%] (n=3), sd 0.65%" or "1 null seed: +0.3% (no interval)".
  std::string describe() const;
  // The same in a table cell's few characters: "sd 0.65% (n=3)".
  std::string cell() const;
};

class ChaosFloors {
 public:
  explicit ChaosFloors(const std::vector<nlohmann::json>& records);
  // The floor of the baseline family an FP8 run was compared with; nullptr without null runs.
  const ChaosFloor* of(const nlohmann::json& record) const;
  std::vector<const ChaosFloor*> all() const;

 private:
  std::map<std::string, ChaosFloor> families_;  // baseline family (noise_floor.hpp) -> floor
};

}  // namespace fp8lab::experiments
