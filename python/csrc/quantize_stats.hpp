// fp8lab._C.quantize_stats (quantize_stats.cpp), registered by module.cpp.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace fp8lab::python {

// quantize_stats(x, rows, cols, recipe, operand, gemm, scale=None) -> dict of OperandStats.
PyObject* quantize_stats(PyObject*, PyObject* args);

}  // namespace fp8lab::python
