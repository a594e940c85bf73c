// The null arms a sweep runs beside its baselines (the sweep key `null_runs:`; the runner's
// experiments/run/null_run.hpp trains them): each is the baseline with a perturbation that is
// not FP8, on the baseline's own seed, so that the report can say how far a perturbation of that
// kind moves training (its chaos floor, experiments/stats/chaos_floor.hpp).
//
//   once      the initial weights rounded once to bf16 (the null since issue 20)
//   per_step  every GEMM operand of every training step plus unbiased noise as large as the
//             quantization error that the `null_noise:` recipe (a what-if name, default current)
//             gives that tensor at that step (experiments/linear/operand_noise.hpp)
//
//   null_runs: true               # = [once]
//   null_runs: [once, per_step]   # both arms on every (workload, seed)
//   null_noise: mxfp8             # optional, per_step only: whose quantization error sizes it
//
// The word and the id prefix are written here once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8lab::recipes {

enum class NullArm : std::uint8_t { once, per_step };

inline constexpr const char* kDefaultNullNoise = "current";

// "once", "per_step".
std::string null_arm_name(NullArm arm);
// The arm a name stands for; nullopt for any other text.
std::optional<NullArm> null_arm_named(std::string_view name);
// "once, per_step": what `null_runs:` and `--null-run` accept.
std::string accepted_null_arms();

}  // namespace fp8lab::recipes
