#include "experiments/stats/noise_floor.hpp"

#include <algorithm>
#include <cmath>

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
std::string baseline_family(const std::string& baseline_run_id) {
  // The last "-seed": the seed follows the workload name, which may itself contain "-seed".
  const auto at = baseline_run_id.rfind("-seed");
  if (at == std::string::npos) return baseline_run_id;
  const auto end = baseline_run_id.find_first_not_of("0123456789", at + 5);
  return baseline_run_id.substr(0, at) +
         (end == std::string::npos ? std::string() : baseline_run_id.substr(end));
}

namespace {

// Baselines comparable seed to seed: everything of the baseline's identity but its seed.
std::string family_key(const RunRecord& record) { return baseline_family(record.run_id); }

}  // namespace

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void append_in_seed_order(std::vector<std::pair<std::int64_t, double>> by_seed,
                          std::vector<std::int64_t>& seeds, std::vector<double>& values) {
  std::sort(by_seed.begin(), by_seed.end());
  for (const auto& [seed, value] : by_seed) {
    seeds.push_back(seed);
    values.push_back(value);
  }
}

std::string NoiseFloor::describe() const {
  std::string seed_list;
  for (const auto seed : seeds) seed_list += (seed_list.empty() ? "" : ", ") + std::to_string(seed);
  if (floor) {
    return "noise floor " + format_percent(floor) +
           " (range / median of the final eval loss over baseline seeds " + seed_list + ")";
  }
  return "noise floor unmeasured (" + std::to_string(seeds.size()) + " finished baseline seed" +
         (seeds.size() == 1 ? "" : "s") + (seeds.empty() ? "" : ": " + seed_list) + "; needs " +
         std::to_string(kMinNoiseSeeds) +
         ", e.g. baseline_seeds: [0, 1, 2] in the sweep file): fixed " + format_percent(tolerance) +
         " tolerance used";
}

NoiseFloors::NoiseFloors(const std::vector<RunRecord>& records) {
  unmeasured_.tolerance = kTracksBaselineTolerance;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> by_family;
  for (const auto& r : records) {
    if (r.kind != "baseline") continue;
    family_of_baseline_[r.run_id] = family_key(r);
    auto& family = families_[family_key(r)];
    family.workload = r.workload;
    const auto loss = r.final->eval_loss.get();
    if (*r.status == "finished" && loss && std::isfinite(*loss)) {
      by_family[family_key(r)].emplace_back(r.seed.value_or(0), *loss);
    }
  }
  for (auto& [key, family] : families_) {
    append_in_seed_order(std::move(by_family[key]), family.seeds, family.losses);
    family.tolerance = kTracksBaselineTolerance;
    const auto middle = median(family.losses);
    if (family.seeds.size() >= kMinNoiseSeeds && middle && *middle > 0) {
      const auto [low, high] = std::minmax_element(family.losses.begin(), family.losses.end());
      family.floor = (*high - *low) / *middle;
      family.tolerance = *family.floor;
    }
  }
}

const NoiseFloor& NoiseFloors::of(const RunRecord& record) const {
  const bool fp8 = record.kind != "baseline";
  const auto id = fp8 ? record.baseline_run_id.value_or("") : record.run_id;
  const auto key = family_of_baseline_.find(id);
  if (key == family_of_baseline_.end()) return unmeasured_;
  return families_.at(key->second);
}

std::vector<const NoiseFloor*> NoiseFloors::all() const {
  std::vector<const NoiseFloor*> out;
  for (const auto& [key, family] : families_) out.push_back(&family);
  return out;
}

}  // namespace fp8lab::experiments
