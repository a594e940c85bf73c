#include "recipes/limits.hpp"

namespace fp8lab::recipes {

std::string IntegerLimit::accepted() const {
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max) + " (" + why + ")";
}

const IntegerLimit& margin_limit() {
  static const IntegerLimit limit{
      0, 149,
      "TE computes fp8_max * 2^-margin in fp32; above 149, 2^-margin is below the smallest fp32 "
      "and every scale would be 0"};
  return limit;
}

const IntegerLimit& interval_limit() {
  static const IntegerLimit limit{
      1, 2147483647,
      "scales are recomputed every interval-th update, and no run makes 2^31 updates"};
  return limit;
}

const IntegerLimit& amax_history_len_limit() {
  static const IntegerLimit limit{
      1, 1 << 20,
      "memory estimate: each delayed-scaled Linear keeps 3 fp32 amax histories of len entries "
      "(input, weight, grad_output; TE keeps 5), 12 MiB per Linear at 2^20, each scanned at "
      "every step"};
  return limit;
}

const IntegerLimit* integer_limit(std::string_view key) {
  if (key == "margin") return &margin_limit();
  if (key == "interval") return &interval_limit();
  if (key == "amax_history_len") return &amax_history_len_limit();
  return nullptr;
}

}  // namespace fp8lab::recipes
