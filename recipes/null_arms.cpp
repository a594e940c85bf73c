#include "recipes/null_arms.hpp"

namespace fp8lab::recipes {

std::string null_arm_name(NullArm arm) { return arm == NullArm::once ? "once" : "per_step"; }

std::optional<NullArm> null_arm_named(std::string_view name) {
  if (name == "once") return NullArm::once;
  if (name == "per_step") return NullArm::per_step;
  return std::nullopt;
}

std::string accepted_null_arms() { return "once, per_step"; }

}  // namespace fp8lab::recipes
