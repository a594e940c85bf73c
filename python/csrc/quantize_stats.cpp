// fp8lab._C.quantize_stats: what one quantize call measured, as the C++ Fp8Linear measures it
// (experiments/linear/linear_stats.hpp, measure_quantization). fp8lab.Linear calls it beside
// torch.ops.fp8lab.quantize on the steps a sweep keeps statistics of, so that the ops' schemas
// stay as they are. The dict's keys are OperandStats' fields; the runner merges the calls of a step
// (OperandStats::merge, experiments/run/python_run.cpp) and writes the record's rows and the
// sidecar. No LibTorch: x comes through the buffer protocol (a float32 numpy view).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <exception>
#include <optional>
#include <span>
#include <string>

#include "experiments/linear/linear_stats.hpp"
#include "python/csrc/lowered.hpp"
#include "python/csrc/quantize_stats.hpp"

namespace fp8lab::python {

PyObject* quantize_stats(PyObject*, PyObject* args) {
  constexpr const char* op = "fp8lab._C.quantize_stats";
  PyObject* buffer = nullptr;
  long long rows = 0, cols = 0;
  const char *recipe = nullptr, *operand = nullptr, *gemm = nullptr;
  PyObject* scale_object = Py_None;
  if (!PyArg_ParseTuple(args, "OLLsss|O:quantize_stats", &buffer, &rows, &cols, &recipe, &operand,
                        &gemm, &scale_object)) {
    return nullptr;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(buffer, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) return nullptr;
  const std::string format = view.format == nullptr ? "B" : view.format;
  if (view.itemsize != 4 || format != "f" || view.len != rows * cols * 4 || rows < 0 || cols < 0) {
    PyBuffer_Release(&view);
    PyErr_Format(PyExc_ValueError,
                 "%s: x must be a contiguous float32 buffer of rows x cols = %lld x %lld elements; "
                 "got format '%s', %zd bytes",
                 op, rows, cols, format.c_str(), view.len);
    return nullptr;
  }
  try {
    const Lowered l = lowered_fp8(op, recipe, operand, gemm);
    std::optional<float> scale;
    if (scale_object != Py_None) scale = static_cast<float>(PyFloat_AsDouble(scale_object));
    if (PyErr_Occurred() != nullptr)
      throw std::invalid_argument(std::string(op) + ": scale must be a float");
    if ((l.plan.kind == sim::scaling::QuantizeKind::kDelayed) != scale.has_value()) {
      throw std::invalid_argument(std::string(op) +
                                  ": scale is given exactly for delayed scaling (the slot's "
                                  "current scale)");
    }
    const std::span<const float> x(static_cast<const float*>(view.buf),
                                   static_cast<std::size_t>(rows * cols));
    const auto result = quantize_lowered(op, l, x, rows, cols, scale);
    const experiments::OperandStats s = experiments::measure_quantization({x, rows, cols}, result);
    PyBuffer_Release(&view);
    return Py_BuildValue(
        "{s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:K,s:K,s:K,s:K,s:d,s:d,s:K,s:d,s:d,s:d,s:d}",
        "quantizations", static_cast<unsigned long long>(s.quantizations), "amax",
        static_cast<double>(s.amax), "scale_min", static_cast<double>(s.scale_min), "scale_max",
        static_cast<double>(s.scale_max), "scale_inv_min", static_cast<double>(s.scale_inv_min),
        "scale_inv_max", static_cast<double>(s.scale_inv_max), "max_block_dynamic_range_log2",
        s.max_block_dynamic_range_log2, "count", static_cast<unsigned long long>(s.count),
        "saturated", static_cast<unsigned long long>(s.saturated), "underflowed",
        static_cast<unsigned long long>(s.underflowed), "nan",
        static_cast<unsigned long long>(s.nan), "sqnr_elements",
        static_cast<unsigned long long>(s.sqnr_elements), "signal_energy", s.signal_energy,
        "noise_energy", s.noise_energy, "moments_elements",
        static_cast<unsigned long long>(s.moments.elements), "moments_s1", s.moments.s1,
        "moments_s2", s.moments.s2, "moments_s3", s.moments.s3, "moments_s4", s.moments.s4);
  } catch (const std::exception& e) {
    PyBuffer_Release(&view);
    PyErr_SetString(PyExc_ValueError, e.what());
    return nullptr;
  }
}

}  // namespace fp8lab::python
