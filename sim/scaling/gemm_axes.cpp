#include "sim/scaling/gemm_axes.hpp"

#include <stdexcept>
#include <string>

namespace fp8lab::sim::scaling {

const char* to_string(Gemm gemm) {
  switch (gemm) {
    case Gemm::kFprop: return "fprop";
    case Gemm::kDgrad: return "dgrad";
    case Gemm::kWgrad: return "wgrad";
  }
  return "?";
}

const char* to_string(Operand operand) {
  switch (operand) {
    case Operand::kInput: return "input";
    case Operand::kWeight: return "weight";
    case Operand::kGradOutput: return "grad_output";
  }
  return "?";
}

const char* to_string(ScaleAxis axis) {
  return axis == ScaleAxis::kRowwise ? "rowwise" : "columnwise";
}

bool uses_operand(Gemm gemm, Operand operand) {
  switch (gemm) {
    case Gemm::kFprop: return operand != Operand::kGradOutput;
    case Gemm::kDgrad: return operand != Operand::kInput;
    case Gemm::kWgrad: return operand != Operand::kWeight;
  }
  return false;
}

ScaleAxis scale_axis(Gemm gemm, Operand operand) {
  if (!uses_operand(gemm, operand)) {
    throw std::invalid_argument(std::string("scale_axis: operand = ") + to_string(operand) +
                                " is not an operand of gemm = " + to_string(gemm) +
                                "; fprop: input, weight; dgrad: grad_output, weight; wgrad: "
                                "grad_output, input");
  }
  switch (gemm) {
    case Gemm::kFprop: return ScaleAxis::kRowwise;
    case Gemm::kDgrad:
      return operand == Operand::kGradOutput ? ScaleAxis::kRowwise : ScaleAxis::kColumnwise;
    case Gemm::kWgrad: return ScaleAxis::kColumnwise;
  }
  return ScaleAxis::kRowwise;
}

}  // namespace fp8lab::sim::scaling
