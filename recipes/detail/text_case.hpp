// Internal to recipes/: ASCII case folding, as accelerate folds its inputs (str.upper() of
// fp8_format, str.lower() of amax_compute_algo and truth words; te-accelerate.md §1.1).
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace fp8lab::recipes::detail {

inline std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace fp8lab::recipes::detail
