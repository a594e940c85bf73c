// What this fp8lab binary was built from: the project version (CMakeLists.txt) and the git commit
// of the source checkout at build time, with whether tracked files differed from it. Defined in a
// .cpp generated at every build (cmake/fp8lab_build_info.cmake): right after a new commit without
// a reconfigure. Every run record stores them (docs/results-schema.md); `fp8lab --version` prints
// them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fp8lab::experiments {

std::string_view fp8lab_version();  // e.g. "0.1.0"
std::string_view git_commit();      // 40 hex digits, or "unknown" outside a git checkout
std::optional<bool> git_dirty();    // null when unknown

// "fp8lab 0.1.0 (git <commit>[, dirty])"
std::string version_text();

}  // namespace fp8lab::experiments
