// What a peer stores for one quantized tensor (the bytes a GPU run dumps and `fp8lab quantize`
// writes: docs/fp4.md, "One tensor from the command line"), from sim's QuantizedTensor:
//   codes   E2M1 packed two a byte, element 2i in the low nibble (sim/pack.hpp, as torchao's
//           pack_uint4 and TE store FP4); E2M3/E3M2 one code a byte in bits 0-5 (torchao);
//           FP8 one code a byte
//   scales  one raw scale byte per block, row-major, no swizzle: E8M0 for MX, E4M3 for NVFP4;
//           for the per-tensor FP8 kinds the fp32 dequantization scale (TE's scale_inv, torchao's
//           scale reciprocal), 4 little-endian bytes
//   global  NVFP4 only: fp32 {amax, encode scale, decode scale} (sim/scaling/nvfp4.hpp)
// A columnwise plan (ScaleAxis::kColumnwise: 16 x 1, 32 x 1 blocks) is stored as the peers store
// it, as the codes and scales of x^T ([cols, rows]), what they produce from x.t().contiguous()
// and TE keeps as its columnwise copy; sim keeps those codes in x's layout.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/scaling/plan.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::sim::scaling {

struct StoredTensor {
  std::vector<std::uint8_t> codes;
  std::int64_t code_rows = 0, code_cols = 0;    // the shape of `codes` in bytes
  std::vector<std::uint8_t> scales;             // raw bytes
  bool fp32_scales = false;                     // per-tensor FP8: scales holds float32 values
  std::int64_t scale_rows = 0, scale_cols = 0;  // in scale values (bytes, or floats)
  std::vector<float> global;                    // NVFP4 only, else empty
};

// The stored bytes of `t`, the result of `plan` (kCurrentTe, kTensorwiseTorchao, kMx, kNvfp4).
// Throws std::invalid_argument naming the plan kind for the other kinds, and naming the shape for
// an E2M1 tensor whose stored rows have an odd number of codes (two codes a byte: torchao refuses
// odd lengths, TE's rows are multiples of 16).
StoredTensor stored_bytes(const QuantizePlan& plan, const QuantizedTensor& t);

}  // namespace fp8lab::sim::scaling
