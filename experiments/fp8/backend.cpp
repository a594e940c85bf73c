#include "experiments/fp8/backend.hpp"

namespace fp8lab::experiments {

std::string_view name(GemmRole role) {
  switch (role) {
    case GemmRole::fprop: return "fprop";
    case GemmRole::dgrad: return "dgrad";
    case GemmRole::wgrad: return "wgrad";
  }
  return "?";
}

std::string_view name(LinearTensor tensor) {
  switch (tensor) {
    case LinearTensor::input: return "input";
    case LinearTensor::weight: return "weight";
    case LinearTensor::grad_output: return "grad_output";
  }
  return "?";
}

std::string_view name(HighPrecision precision) {
  switch (precision) {
    case HighPrecision::fp32: return "fp32";
    case HighPrecision::bf16: return "bf16";
  }
  return "?";
}

}  // namespace fp8lab::experiments
