// The verdict of `fp8lab sweep --shadow-every`: the shadow checks (linear/shadow_check.hpp) that the
// run records of a results directory carry, summed. No LibTorch.
#pragma once

#include <cstdint>
#include <string>

namespace fp8lab::experiments {

// The shadow checks of a results directory's run records (<dir>/runs/*.json): one line per record
// (run id, status, backend, mismatches over values compared, or why it has no check), then the
// total. `clean` is true when every record carries a shadow_check with 0 mismatches.
struct ShadowSummary {
  std::string text;
  std::int64_t records = 0;
  std::int64_t mismatches = 0;
  // Failed runs, runs made without --shadow-every, and checks that compared no value.
  std::int64_t without_check = 0;
  bool clean() const { return records > 0 && mismatches == 0 && without_check == 0; }
};
ShadowSummary summarize_shadow_checks(const std::string& results_directory);

}  // namespace fp8lab::experiments
