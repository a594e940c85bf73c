// The Python module fp8lab._C. Importing it loads this library, whose static registrations
// (ops.cpp) define torch.ops.fp8lab.*; its two functions answer, from the same lowering as the
// kernels, what the fake kernels (python/fp8lab/_fake.py) need to give shapes without data, and
// what a user asks to see how a recipe quantizes an operand. Plain CPython API (no pybind11):
// two functions do not need it. Errors become ValueError with the C++ text.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <exception>
#include <string>

#include "python/csrc/lowered.hpp"
#include "recipes/recipe.hpp"
#include "sim/format.hpp"

namespace fp8lab::python {
namespace {

PyObject* value_error(const std::exception& e) {
  PyErr_SetString(PyExc_ValueError, e.what());
  return nullptr;
}

// plan(recipe, operand, gemm) -> dict: recipes::plan of that operand and GEMM.
PyObject* plan(PyObject*, PyObject* args) {
  const char *recipe = nullptr, *operand = nullptr, *gemm = nullptr;
  if (!PyArg_ParseTuple(args, "sss:plan", &recipe, &operand, &gemm)) return nullptr;
  try {
    const Lowered l = lowered("fp8lab.plan", recipe, operand, gemm);
    const sim::scaling::QuantizePlan& p = l.plan;
    const recipes::GemmAccumulation& models = l.recipe->gemm;
    const recipes::Accumulation accumulation = l.gemm == sim::scaling::Gemm::kFprop ? models.fprop
                                               : l.gemm == sim::scaling::Gemm::kDgrad
                                                   ? models.dgrad
                                                   : models.wgrad;
    PyObject* out = Py_BuildValue(
        "{s:s,s:s,s:(LL),s:s,s:O,s:s,s:s,s:O,s:s,s:O}", "kind", sim::scaling::to_string(p.kind),
        "format", sim::spec(p.format).name, "block", static_cast<long long>(p.block.rows),
        static_cast<long long>(p.block.cols), "axis", sim::scaling::to_string(p.axis), "pow2",
        p.pow2 ? Py_True : Py_False, "mx_mode", sim::scaling::to_string(p.mx_mode),
        "torchao_version", sim::scaling::to_string(p.torchao), "runs_fp8",
        l.runs_fp8 ? Py_True : Py_False, "accumulation",
        std::string(recipes::name(accumulation)).c_str(), "k_is_cols",
        sim::scaling::k_is_cols(l.gemm, l.operand) ? Py_True : Py_False);
    if (out == nullptr || p.kind != sim::scaling::QuantizeKind::kDelayed) return out;
    const sim::scaling::DelayedScalingConfig& d = p.delayed;
    PyObject* delayed =
        Py_BuildValue("{s:L,s:L,s:L,s:s}", "margin", static_cast<long long>(d.margin), "interval",
                      static_cast<long long>(d.interval), "amax_history_len",
                      static_cast<long long>(d.amax_history_len), "amax_compute_algo",
                      sim::scaling::to_string(d.amax_compute_algo));
    if (delayed == nullptr || PyDict_SetItemString(out, "delayed", delayed) != 0) {
      Py_XDECREF(delayed);
      Py_DECREF(out);
      return nullptr;
    }
    Py_DECREF(delayed);
    return out;
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

// gemm_operands(gemm) -> ((operand a, a's K is its columns), (operand b, b's K is its columns)).
PyObject* gemm_operands(PyObject*, PyObject* args) {
  const char* gemm = nullptr;
  if (!PyArg_ParseTuple(args, "s:gemm_operands", &gemm)) return nullptr;
  try {
    const sim::scaling::Gemm g = parse_gemm("fp8lab.gemm_operands", gemm);
    const sim::scaling::GemmOperands o = sim::scaling::gemm_operands(g);
    return Py_BuildValue("((sO)(sO))", sim::scaling::to_string(o.a),
                         sim::scaling::k_is_cols(g, o.a) ? Py_True : Py_False,
                         sim::scaling::to_string(o.b),
                         sim::scaling::k_is_cols(g, o.b) ? Py_True : Py_False);
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

PyMethodDef methods[] = {
    {"plan", plan, METH_VARARGS,
     "plan(recipe, operand, gemm) -> dict: how the recipe quantizes that operand of that GEMM "
     "(recipes/lowering's QuantizePlan)."},
    {"gemm_operands", gemm_operands, METH_VARARGS,
     "gemm_operands(gemm) -> ((a, a_k_is_cols), (b, b_k_is_cols)): the GEMM's operands in "
     "order and whether K is each one's stored columns."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_C",
                      "fp8lab's ops over sim/ and recipes/ (torch.ops.fp8lab.*)",
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace
}  // namespace fp8lab::python

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&fp8lab::python::module); }
