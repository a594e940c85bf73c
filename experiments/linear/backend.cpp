#include "experiments/linear/backend.hpp"

namespace fp8lab::experiments {

std::string_view name(HighPrecision precision) {
  switch (precision) {
    case HighPrecision::fp32: return "fp32";
    case HighPrecision::bf16: return "bf16";
  }
  return "?";
}

}  // namespace fp8lab::experiments
