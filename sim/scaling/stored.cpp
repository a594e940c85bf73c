#include "sim/scaling/stored.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "sim/pack.hpp"
#include "sim/transposed.hpp"

namespace fp8lab::sim::scaling {

StoredTensor stored_bytes(const QuantizePlan& plan, const QuantizedTensor& t) {
  t.check_shape("stored_bytes");
  StoredTensor s;
  const bool columnwise = plan.axis == ScaleAxis::kColumnwise;
  s.code_rows = columnwise ? t.cols : t.rows;
  s.code_cols = columnwise ? t.rows : t.cols;
  s.scale_rows = columnwise ? t.scale_cols() : t.scale_rows();
  s.scale_cols = columnwise ? t.scale_rows() : t.scale_cols();
  switch (plan.kind) {
    case QuantizeKind::kMx: s.scales = t.scale_e8m0; break;
    case QuantizeKind::kNvfp4:
      s.scales = t.scale_e4m3;
      s.global = t.global_scale;
      break;
    case QuantizeKind::kCurrentTe:
    case QuantizeKind::kTensorwiseTorchao:
      s.fp32_scales = true;
      s.scales.resize(t.scale_inv.size() * sizeof(float));
      std::memcpy(s.scales.data(), t.scale_inv.data(), s.scales.size());
      break;
    default:
      throw std::invalid_argument(std::string("stored_bytes: plan kind ") + to_string(plan.kind) +
                                  " has no stored form here; current_te, tensorwise_torchao, mx, "
                                  "nvfp4 have");
  }
  s.codes = columnwise ? transposed(t.data, t.rows, t.cols) : t.data;
  if (columnwise && !s.fp32_scales) s.scales = transposed(s.scales, t.scale_rows(), t.scale_cols());
  if (t.format == Format::E2M1) {
    if (s.code_cols % 2 != 0) {
      throw std::invalid_argument("stored_bytes: E2M1 codes are stored two a byte along a row, "
                                  "and a stored row here has " +
                                  std::to_string(s.code_cols) + " codes (" +
                                  std::to_string(s.code_rows) + " x " +
                                  std::to_string(s.code_cols) + "); an even count is accepted");
    }
    std::vector<std::uint8_t> packed(packed_e2m1_bytes(s.codes.size()));
    pack_e2m1(s.codes, packed);
    s.codes = std::move(packed);
    s.code_cols /= 2;
  }
  return s;
}

}  // namespace fp8lab::sim::scaling
