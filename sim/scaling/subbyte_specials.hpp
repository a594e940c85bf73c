// Which NaN and -0 codes a scaling's sub-byte element cast gives (sim/cast.hpp, SubbyteSpecials),
// per mode: one decision that sim's quantizers (mx.cpp, nvfp4.cpp) and gpu/'s kernels both read.
// Header-only (sim/cast.hpp's constants and sim/settings.hpp), so that gpu/ may include it.
#pragma once

#include "sim/cast.hpp"
#include "sim/format.hpp"  // FP8LAB_HD
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

// MXFP4/MXFP6 under an E8M0 mode: kSubbyteCuda for kTe (cvt.rn.satfinite); for torchao's modes
// kSubbyteTorchao (_f32_to_floatx_unpacked of the NaN x / scale gives), 0.18's rceil included:
// its torch.clamp comes first but keeps a NaN's bits (docs/fp4.md, "Where a NaN's bytes go";
// test_fp4_scaling_torchao.py's test_mx_nan_bytes_are_torchaos). torchao main's sub-byte
// elements are modelled as kSubbyteTorchao and not checked against it.
// (The presets are copied into local constants: device code may not read a namespace-scope
// variable, but may use a constant expression.)
FP8LAB_HD constexpr SubbyteSpecials mx_subbyte_specials(E8M0Mode mode, TorchaoVersion torchao) {
  constexpr SubbyteSpecials cuda = kSubbyteCuda, torchao_plain = kSubbyteTorchao;
  if (mode == E8M0Mode::kTe) return cuda;
  (void)torchao;
  return torchao_plain;
}

// NVFP4: TE's kernels cast with cvt.rn.satfinite (NaN -> +6); torchao's nvfp4_quantize clamps to
// ±6 first (torch.clamp keeps the NaN's bits, which the product chose: nvfp4.cpp) and casts the
// bits; torchao's NVFP4TrainingConfig kernels clamp with tl.clamp and cast with
// cvt.rn.satfinite.e2m1x2 (NaN elements: not checked, no Blackwell).
FP8LAB_HD constexpr SubbyteSpecials nvfp4_subbyte_specials(Nvfp4Mode mode) {
  constexpr SubbyteSpecials cuda = kSubbyteCuda, torchao_plain = kSubbyteTorchao;
  return mode == Nvfp4Mode::kTorchao ? torchao_plain : cuda;
}

}  // namespace fp8lab::sim::scaling
