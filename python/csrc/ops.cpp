// torch.ops.fp8lab.*: the schemas (docs/python.md explains each argument) and their kernels.
// Every quantizing op names the quantization it runs as (recipe, operand, gemm), lowered by
// recipes/lowering in C++ (python/csrc/lowered.hpp): an element format or a scaling mode that
// the recipes gain reaches these ops without a new op or a new argument. high_precision_mm is
// the GEMM a recipe keeps in high precision (sim::high_precision_gemm).
//   CPU   sim/ (python/csrc/kernels.cpp)
//   CUDA  gpu/ (python/csrc/cuda/kernels_cuda.cpp) when built with FP8LAB_PYTHON_CUDA=ON, with
//         NotImplementedError where gpu/ lacks a piece; else NotImplementedError for every op
//   Meta  the fake kernels of python/fp8lab/_fake.py (torch.library.register_fake)
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "python/csrc/kernels.hpp"
#ifdef FP8LAB_PYTHON_CUDA
#include "python/csrc/cuda/kernels_cuda.hpp"
#endif

namespace fp8lab::python {
namespace {

#ifndef FP8LAB_PYTHON_CUDA
// Tensors on a CUDA device in a build without FP8LAB_PYTHON_CUDA (pip install . builds no CUDA).
void cuda_not_built(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, op.schema().name(),
                              " on CUDA tensors: this build of fp8lab has no CUDA kernels (the "
                              "ops run sim/ on the CPU). Build the package with "
                              "FP8LAB_PYTHON_CUDA=ON to run gpu/ (docs/python.md), or move the "
                              "tensors to the CPU (.cpu()) to run sim/.");
}
#endif

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
#ifdef FP8LAB_PYTHON_CUDA
  m.impl("quantize", &quantize_cuda);
  m.impl("dequantize", &dequantize_cuda);
  m.impl("scaled_mm", &scaled_mm_cuda);
  m.impl("high_precision_mm", &high_precision_mm_cuda);
  m.impl("delayed_update", &delayed_update_cuda);
#else
  for (const char* name :
       {"quantize", "dequantize", "scaled_mm", "high_precision_mm", "delayed_update"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&cuda_not_built>());
  }
#endif
}

}  // namespace fp8lab::python
