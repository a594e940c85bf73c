#include "experiments/results/eval_tail.hpp"

#include <cmath>

namespace fp8lab::experiments {

std::size_t tail_points(std::size_t eval_points) {
  if (eval_points == 0) return 0;
  const auto count =
      static_cast<std::size_t>(std::ceil(kTailFraction * static_cast<double>(eval_points)));
  return count < 1 ? 1 : count;
}

bool eval_enters_verdicts(std::size_t index, std::size_t eval_points) {
  return index == 0 || index + tail_points(eval_points) >= eval_points;
}

}  // namespace fp8lab::experiments
