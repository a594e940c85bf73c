// The seed-to-seed noise floor of the high-precision baseline, which the verdicts compare an FP8
// run's final eval-loss difference with (analysis.hpp). No LibTorch.
//
// Statistic: over the finished baselines of one family (same workload, baseline precision, steps
// and placement: the run id but its seed, baseline_family; one per seed), noise floor = (max - min) / median of their final eval losses, i.e.
// the largest relative distance between two seeds. Why this one: an FP8 run's
// final_eval_rel_diff is the distance between two training runs (the FP8 run and its baseline on
// the same seed), so the comparable seed-to-seed figure is also a distance between two runs, and
// the largest one observed is what "indistinguishable from changing the seed" can fairly mean. With
// 3 seeds of a normally distributed loss it is about 1.7 standard deviations (the expected
// distance of two runs is 1.13), so a recipe that behaves like one more seed tracks the baseline.
//
// Fewer than kMinNoiseSeeds finished seeds: the floor is unmeasured and the verdicts fall back to
// the fixed kTracksBaselineTolerance (analysis.hpp); the reports say so.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

inline constexpr std::size_t kMinNoiseSeeds = 3;

struct NoiseFloor {
  std::string workload;
  std::vector<std::int64_t> seeds;  // of the finished baselines measured
  std::vector<double> losses;       // their final eval losses, in seed order
  std::optional<double> floor;      // (max - min) / median; set when seeds.size() >= 3
  double tolerance = 0;             // what |final eval rel diff| is compared with

  // "noise floor 0.84% (range / median of the final eval loss over baseline seeds 0, 1, 2)" or
  // "noise floor unmeasured (1 baseline seed: 0; needs 3, e.g. baseline_seeds: [0, 1, 2] in the
  // sweep file): fixed 2% tolerance used".
  std::string describe() const;
};

// A baseline run id without its "-seed<N>" ("baseline-w-seed1-fp32-cuda" -> "baseline-w-fp32-cuda"):
// the family of baselines comparable seed to seed. The id names the workload, precision, steps
// and placement (run_ids.hpp), and every record has it (a failed one too, unlike steps_planned).
std::string baseline_family(const std::string& baseline_run_id);

// Sorts one family's (seed, value) pairs by seed and appends them to seeds and values, so that
// both the noise floors and the chaos floors list a family's runs in seed order.
void append_in_seed_order(std::vector<std::pair<std::int64_t, double>> by_seed,
                          std::vector<std::int64_t>& seeds, std::vector<double>& values);

// The median of the values (the mean of the two middle ones for an even count); empty for none.
std::optional<double> median(std::vector<double> values);

class NoiseFloors {
 public:
  explicit NoiseFloors(const std::vector<RunRecord>& records);
  // The floor of the baseline family a record belongs to (an FP8 run: that of the baseline it was
  // compared with, baseline_run_id). Without such a baseline: an unmeasured floor, the fallback.
  const NoiseFloor& of(const RunRecord& record) const;
  // Every family that has a baseline, in key order.
  std::vector<const NoiseFloor*> all() const;

 private:
  std::map<std::string, NoiseFloor> families_;
  std::map<std::string, std::string> family_of_baseline_;  // baseline run id -> family key
  NoiseFloor unmeasured_;
};

}  // namespace fp8lab::experiments
