#include "sim/scaling/execute.hpp"

#include <stdexcept>
#include <string>

#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::sim::scaling {

QuantizeResult quantize(const QuantizePlan& p, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols) {
  switch (p.kind) {
    case QuantizeKind::kCurrentTe: return quantize_current_te(x, rows, cols, p.format, p.pow2);
    case QuantizeKind::kTensorwiseTorchao:
      return quantize_tensorwise_torchao(x, rows, cols, p.format, p.pow2);
    case QuantizeKind::kAxiswiseTorchao:
      return quantize_axiswise_torchao(x, rows, cols, p.axis, p.format, p.pow2);
    case QuantizeKind::kBlockTe: {
      BlockScalingConfig config;
      config.block = p.block;
      config.pow2 = p.pow2;
      return quantize_block_te(x, rows, cols, p.format, config);
    }
    case QuantizeKind::kMx:
      if (p.block == BlockShape{kMxBlockSize, kMxBlockSize}) {
        return quantize_mx_2d(x, rows, cols, p.format, p.mx_mode, p.torchao);
      }
      return quantize_mx(x, rows, cols, p.axis, p.format, p.mx_mode, p.torchao);
    case QuantizeKind::kDelayed:
    case QuantizeKind::kHighPrecision: break;
  }
  throw std::invalid_argument(std::string("sim::scaling::quantize: a ") + to_string(p.kind) +
                              " plan has no stateless quantizer");
}

}  // namespace fp8lab::sim::scaling
