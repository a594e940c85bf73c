#include "experiments/build_info.hpp"

namespace fp8lab::experiments {

std::string version_text() {
  std::string text = "fp8lab ";
  text.append(fp8lab_version()).append(" (git ").append(git_commit());
  if (git_dirty().value_or(false)) text.append(", dirty");
  return text.append(")");
}

}  // namespace fp8lab::experiments
