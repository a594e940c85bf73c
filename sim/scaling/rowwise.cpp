#include "sim/scaling/rowwise.hpp"

#include <limits>

#include "sim/name_table.hpp"
#include "sim/scaling/blocked.hpp"
#include "sim/scaling/current.hpp"

namespace fp8lab::sim::scaling {

constexpr sim::NameTable<TorchaoRecipe, 3> kTorchaoRecipeNames{
    {{TorchaoRecipe::kTensorwise, "tensorwise"},
     {TorchaoRecipe::kRowwise, "rowwise"},
     {TorchaoRecipe::kRowwiseWithGwHp, "rowwise_with_gw_hp"}}};
const char* to_string(TorchaoRecipe recipe) { return sim::name_in(kTorchaoRecipeNames, recipe); }

constexpr sim::NameTable<OperandScaling, 3> kOperandScalingNames{
    {{OperandScaling::kTensorwise, "tensorwise"},
     {OperandScaling::kAxiswise, "axiswise"},
     {OperandScaling::kHighPrecision, "high_precision"}}};
const char* to_string(OperandScaling scaling) {
  return sim::name_in(kOperandScalingNames, scaling);
}

OperandCast torchao_operand_cast(TorchaoRecipe recipe, Gemm gemm, Operand operand) {
  scale_axis(gemm, operand);  // throws for an operand the GEMM does not have
  switch (recipe) {
    case TorchaoRecipe::kTensorwise: {
      const Format f = operand == Operand::kGradOutput ? Format::E5M2 : Format::E4M3;
      return {OperandScaling::kTensorwise, f, false};
    }
    case TorchaoRecipe::kRowwise: return {OperandScaling::kAxiswise, Format::E4M3, true};
    case TorchaoRecipe::kRowwiseWithGwHp:
      if (gemm == Gemm::kWgrad) return {OperandScaling::kHighPrecision, Format::E4M3, true};
      if (gemm == Gemm::kDgrad && operand == Operand::kWeight) {
        return {OperandScaling::kTensorwise, Format::E4M3, true};
      }
      return {OperandScaling::kAxiswise, Format::E4M3, true};
  }
  return {OperandScaling::kHighPrecision, Format::E4M3, false};
}

QuantizeResult quantize_axiswise_torchao(std::span<const float> x, std::int64_t rows,
                                         std::int64_t cols, ScaleAxis axis, Format format,
                                         bool pow2) {
  const float max = fp8_max(format);
  const BlockShape block = axis == ScaleAxis::kRowwise ? BlockShape{1, cols} : BlockShape{rows, 1};
  return quantize_blocked("quantize_axiswise_torchao", x, rows, cols, block, format, false,
                          [max, pow2](float amax, bool has_nan) {
                            const float a = has_nan ? std::numeric_limits<float>::quiet_NaN()
                                                    : amax;
                            const float s = torchao_scale_from_amax(a, max, pow2);
                            return BlockScale{s, 1.0f / s, 0};
                          });
}

std::optional<QuantizeResult> quantize_torchao_operand(std::span<const float> x, std::int64_t rows,
                                                       std::int64_t cols, TorchaoRecipe recipe,
                                                       Gemm gemm, Operand operand) {
  const OperandCast cast = torchao_operand_cast(recipe, gemm, operand);
  switch (cast.scaling) {
    case OperandScaling::kTensorwise:
      return quantize_tensorwise_torchao(x, rows, cols, cast.format, cast.pow2);
    case OperandScaling::kAxiswise:
      return quantize_axiswise_torchao(x, rows, cols, scale_axis(gemm, operand), cast.format,
                                       cast.pow2);
    case OperandScaling::kHighPrecision: break;
  }
  return std::nullopt;
}

}  // namespace fp8lab::sim::scaling
