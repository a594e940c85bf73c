// The range of every integer recipe field, each decided once here and checked where the value is
// read (fields.cpp for fp8lab files, sweeps and --set; accelerate.cpp for accelerate configs and
// ACCELERATE_FP8_* variables), so that no later narrowing (the int margin of the delayed scaling
// state, sim/scaling/delayed.hpp) can change a value silently: margin 4294967296 used to train as
// margin 0. A value outside is refused (RecipeError, exit 2) with the range and its reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fp8lab::recipes {

struct IntegerLimit {
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string why;  // why max is where it is
  bool contains(std::int64_t value) const { return value >= min && value <= max; }
  // "an integer from MIN to MAX (WHY)", for "accepted:" in messages.
  std::string accepted() const;
};

// margin: 0..149. TE computes fp8_max * 2^-margin in fp32; above 149, 2^-margin is below the
// smallest fp32 (2^-149) and every scale is 0.
const IntegerLimit& margin_limit();
// interval: 1..2^31 - 1 (a C int; TE ignores interval, fp8lab recomputes scales every interval-th
// update, and no run makes 2^31 updates).
const IntegerLimit& interval_limit();
// amax_history_len: 1..2^20, from a memory estimate: each delayed-scaled Linear keeps fp32
// histories of len entries for its 3 scaled tensors (sim/scaling/delayed.hpp; TE keeps 5, [len, 3]
// forward and [len, 2] backward), 12 bytes x len, scanned at every step: 12 MiB per Linear at the
// limit (gpt-small: a few hundred MiB), 12 GB per Linear at the 10^9 that ended in bad_alloc.
const IntegerLimit& amax_history_len_limit();

// The limit of an integer recipe field by its key (margin, interval, amax_history_len), or
// nullptr for a key that is not one.
const IntegerLimit* integer_limit(std::string_view key);

}  // namespace fp8lab::recipes
