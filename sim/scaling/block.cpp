#include "sim/scaling/block.hpp"

#include <stdexcept>
#include <string>

#include "sim/scaling/current.hpp"

namespace fp8lab::sim::scaling {

float block_value_for_inf(Format input_dtype) {
  if (input_dtype != Format::FP32 && input_dtype != Format::BF16 && input_dtype != Format::FP16) {
    throw std::invalid_argument(std::string("BlockScalingConfig: input_dtype = ") +
                                spec(input_dtype).name + "; accepted: fp32, bf16, fp16");
  }
  return static_cast<float>(spec(input_dtype).max_finite());
}

QuantizeResult quantize_block_te(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                 Format format, const BlockScalingConfig& config) {
  const float max = fp8_max(format);
  const float value_for_inf = block_value_for_inf(config.input_dtype);
  const bool pow2 = config.pow2;
  const float eps = config.amax_epsilon;
  return quantize_blocked("quantize_block_te", x, rows, cols, config.block, format, false,
                          [=](float amax, bool /*has_nan: TE's fmaxf amax ignores NaN*/) {
                            const float s = te_scale_from_amax(amax, max, pow2, eps, value_for_inf);
                            return BlockScale{s, 1.0f / s, 0};
                          });
}

QuantizeResult quantize_block_operand(std::span<const float> x, std::int64_t rows,
                                      std::int64_t cols, Gemm gemm, Operand operand, Format format,
                                      const BlockScalingConfig& config) {
  BlockScalingConfig chosen = config;
  chosen.block = te_block_shape(gemm, operand);  // throws for an operand the GEMM lacks
  return quantize_block_te(x, rows, cols, format, chosen);
}

}  // namespace fp8lab::sim::scaling
