// torch.ops.fp8lab.*: the schemas (docs/python.md explains each argument) and their kernels.
// Every quantizing op names the quantization it runs as (recipe, operand, gemm), lowered by
// recipes/lowering in C++ (python/csrc/lowered.hpp): an element format or a scaling mode that
// the recipes gain reaches these ops without a new op or a new argument. high_precision_mm is
// the GEMM a recipe keeps in high precision (sim::high_precision_gemm).
//   CPU   sim/ (python/csrc/kernels.cpp)
//   CUDA  not built yet: NotImplementedError naming what is missing
//   Meta  the fake kernels of python/fp8lab/_fake.py (torch.library.register_fake)
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "python/csrc/kernels.hpp"

namespace fp8lab::python {
namespace {

// Tensors on a CUDA device: gpu/ has the kernels (gpu::scaling::quantize, gpu/gemm) but the ops
// do not call them yet, and this build (pip install .) compiles no CUDA.
void cuda_not_built(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, op.schema().name(),
                              " on CUDA tensors: not built yet (the ops run sim/ on the CPU; "
                              "gpu/'s kernels are not wired into them). Move the tensors to the "
                              "CPU (.cpu()) to run sim/.");
}

}  // namespace

TORCH_LIBRARY(fp8lab, m) {
  const std::vector<at::Tag> tags{at::Tag::pt2_compliant_tag};
  m.def("quantize(Tensor x, str recipe, str operand, str gemm, Tensor? scale=None) -> "
        "(Tensor codes, Tensor scale_inv, Tensor amax)",
        tags);
  m.def("dequantize(Tensor codes, Tensor scale_inv, str recipe, str operand, str gemm) -> Tensor",
        tags);
  m.def(
      "scaled_mm(Tensor a, Tensor a_scale_inv, Tensor b, Tensor b_scale_inv, str recipe, str gemm, "
      "Tensor? bias=None, str? accumulation=None, ScalarType? out_dtype=None) -> Tensor",
      tags);
  m.def("high_precision_mm(Tensor a, Tensor b, str gemm, Tensor? bias=None, bool "
        "bf16_operands=False, ScalarType? out_dtype=None) -> Tensor",
        tags);
  m.def("delayed_update(Tensor amax_history, Tensor scale, Tensor amax, str recipe, str operand, "
        "int update) -> (Tensor next_amax_history, Tensor next_scale)",
        tags);
}

TORCH_LIBRARY_IMPL(fp8lab, CPU, m) {
  m.impl("quantize", &quantize_cpu);
  m.impl("dequantize", &dequantize_cpu);
  m.impl("scaled_mm", &scaled_mm_cpu);
  m.impl("high_precision_mm", &high_precision_mm_cpu);
  m.impl("delayed_update", &delayed_update_cpu);
}

TORCH_LIBRARY_IMPL(fp8lab, CUDA, m) {
  for (const char* name :
       {"quantize", "dequantize", "scaled_mm", "high_precision_mm", "delayed_update"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&cuda_not_built>());
  }
}

}  // namespace fp8lab::python
