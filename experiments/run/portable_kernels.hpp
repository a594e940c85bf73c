// What `FP8LAB_CPU_NUMERICS=portable` does beyond LibTorch's two pins, because the pins do not
// reach it (issue 45; measured on an Intel Xeon with AVX-512 against the same torch under an
// emulated AVX2-only CPU, docs/architecture.md "Bits across processors"):
// - MKL's vector math (VML), which ATen calls for sqrt, exp, log, tanh, sin, cos, erf, atan and
//   the rest of at::vml's list, picks its code from the CPU's ISA even under MKL_CBWR=COMPATIBLE:
//   fp32 sqrt (not correctly rounded there) gives other bits with AVX-512 than without. AdamW takes
//   sqrt of its second moment every step, so the first update already differs.
// - oneDNN, which ATen calls for GELU (erf) forward and backward, JIT-compiles for the CPU's ISA.
// So in portable mode fp8lab registers its own CPU kernels for every op of at::vml's MKL list
// (element by element, the C library's function in the element's precision, sqrt correctly
// rounded) and turns oneDNN off for the process. Native mode is untouched.
#pragma once

#include <string>
#include <vector>

namespace fp8lab::experiments {

// Registers the kernels and turns oneDNN off; idempotent. Called by
// pin_cpu_numerics_from_environment (cpu_numerics.hpp) for portable mode, before any kernel runs.
void use_portable_kernels();

// The ATen ops whose CPU kernels use_portable_kernels replaces ("sqrt", "exp", ...).
const std::vector<std::string>& portable_kernel_ops();

}  // namespace fp8lab::experiments
