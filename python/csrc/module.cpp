// The Python module fp8lab._C. Importing it loads this library, whose static registrations
// (ops.cpp) define torch.ops.fp8lab.*. Its functions answer, from the same lowering as the
// kernels, what the fake kernels (python/fp8lab/_fake.py) need to give shapes without data and
// what a user asks to see how a recipe quantizes an operand; and they read recipes with recipes/'
// readers (recipe files, accelerate configs, ACCELERATE_FP8_* variables) into the recipe text the
// ops take. Plain CPython API (no pybind11): a few functions do not need it. Errors become
// ValueError with the C++ text.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <exception>
#include <map>
#include <string>
#include <vector>

#include "python/csrc/lowered.hpp"
#include "python/csrc/quantize_stats.hpp"
#include "recipes/accelerate.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe.hpp"
#include "recipes/recipe_text.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/run_source.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/unmatched_keep.hpp"
#include "sim/format.hpp"

namespace fp8lab::python {
namespace {

PyObject* value_error(const std::exception& e) {
  PyErr_SetString(PyExc_ValueError, e.what());
  return nullptr;
}

// The recipe text one Linear runs: `text` itself without per_role rules, else the complete text
// of recipes::for_layer (the rules that match `layer`, their patterns dropped).
std::string recipe_for_layer_text(const std::string& text, const std::string& layer) {
  const auto parsed = parsed_recipe(text);
  if (parsed->per_role.empty()) return text;
  return recipes::recipe_file_text(recipes::for_layer(*parsed, layer));
}

// recipe_for_layer(recipe, layer) -> str: recipe_for_layer_text, for fp8lab.Linear.
PyObject* recipe_for_layer(PyObject*, PyObject* args) {
  const char *text = nullptr, *layer = nullptr;
  if (!PyArg_ParseTuple(args, "ss:recipe_for_layer", &text, &layer)) return nullptr;
  try {
    const std::string out = recipe_for_layer_text(text, layer);
    return PyUnicode_FromStringAndSize(out.data(), static_cast<Py_ssize_t>(out.size()));
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

// plan(recipe, operand, gemm, layer=None) -> dict: recipes::plan of that operand and GEMM; with
// a layer name, the plan of that Linear (keep_high_precision applies).
PyObject* plan(PyObject*, PyObject* args) {
  const char *recipe = nullptr, *operand = nullptr, *gemm = nullptr, *layer = nullptr;
  if (!PyArg_ParseTuple(args, "sss|z:plan", &recipe, &operand, &gemm, &layer)) return nullptr;
  try {
    // With a layer, that Linear's recipe (per_role rules resolved for its name: for_layer).
    const std::string text = layer != nullptr ? recipe_for_layer_text(recipe, layer) : recipe;
    Lowered l = lowered("fp8lab.plan", text, operand, gemm);
    if (layer != nullptr) {
      l.plan = recipes::plan(*l.recipe, layer, l.operand, l.gemm);
      l.runs_fp8 = recipes::gemm_runs_fp8(*l.recipe, layer, l.gemm);
    }
    const sim::scaling::QuantizePlan& p = l.plan;
    const recipes::GemmAccumulation models =
        recipes::gemm_accumulation(*l.recipe, layer != nullptr ? layer : "");
    const recipes::Accumulation accumulation = l.gemm == sim::scaling::Gemm::kFprop ? models.fprop
                                               : l.gemm == sim::scaling::Gemm::kDgrad
                                                   ? models.dgrad
                                                   : models.wgrad;
    PyObject* out = Py_BuildValue(
        "{s:s,s:s,s:(LL),s:s,s:O,s:s,s:s,s:s,s:O,s:s,s:O}", "kind", sim::scaling::to_string(p.kind),
        "format", sim::spec(p.format).name, "block", static_cast<long long>(p.block.rows),
        static_cast<long long>(p.block.cols), "axis", sim::scaling::to_string(p.axis), "pow2",
        p.pow2 ? Py_True : Py_False, "mx_mode", sim::scaling::to_string(p.mx_mode),
        "torchao_version", sim::scaling::to_string(p.torchao), "nvfp4_mode",
        sim::scaling::to_string(p.nvfp4_mode), "runs_fp8", l.runs_fp8 ? Py_True : Py_False,
        "accumulation", std::string(recipes::name(accumulation)).c_str(), "k_is_cols",
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

// A new Python list of these strings, or nullptr with the Python error set.
PyObject* str_list(const std::vector<std::string>& strings) {
  PyObject* list = PyList_New(0);
  if (list == nullptr) return nullptr;
  for (const std::string& text : strings) {
    PyObject* item = PyUnicode_FromString(text.c_str());
    if (item == nullptr || PyList_Append(list, item) != 0) {
      Py_XDECREF(item);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return list;
}

// recipe_info(recipe) -> dict: the parsed recipe's identity and the fields Python's modules read.
PyObject* recipe_info(PyObject*, PyObject* args) {
  const char* text = nullptr;
  if (!PyArg_ParseTuple(args, "s:recipe_info", &text)) return nullptr;
  try {
    const auto r = parsed_recipe(text);
    const recipes::ModuleFilter& f = r->module_filter;
    PyObject* skip_names = str_list(f.skip_names);
    if (skip_names == nullptr) return nullptr;
    return Py_BuildValue(
        "{s:s,s:s,s:s,s:O,s:{s:N,s:O,s:O,s:O}}", "scaling",
        std::string(recipes::name(r->scaling)).c_str(), "canonical",
        recipes::canonical_string(*r).c_str(), "describe", recipes::describe(*r).c_str(),
        "use_autocast_during_eval", r->use_autocast_during_eval ? Py_True : Py_False,
        "module_filter", "skip_names", skip_names, "skip_first_last_linear",
        f.skip_first_last_linear ? Py_True : Py_False, "require_dims_divisible_by_16",
        f.require_dims_divisible_by_16 ? Py_True : Py_False,
        "skip_later_siblings_after_indivisible",
        f.skip_later_siblings_after_indivisible ? Py_True : Py_False);
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

// is_accelerate_config(text) -> bool: told apart from an fp8lab recipe as `fp8lab explain` does.
PyObject* is_accelerate_config(PyObject*, PyObject* args) {
  const char* text = nullptr;
  if (!PyArg_ParseTuple(args, "s:is_accelerate_config", &text)) return nullptr;
  try {
    return PyBool_FromLong(recipes::looks_like_accelerate_config(text) ? 1 : 0);
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

// The recipe text of a RunSource: what `fp8lab run` runs for it (recipes::recipe_to_run with
// runs_as "asked" or "upstream"), written back as recipe-file text.
PyObject* source_recipe_text(const recipes::RunSource& source, const char* runs_as) {
  const recipes::RunsAs how = recipes::parse_runs_as(runs_as, source.site, "runs_as");
  const recipes::RecipeToRun run = recipes::recipe_to_run(source.compatibility, how, source.site);
  return PyUnicode_FromString(recipes::recipe_file_text(run.recipe).c_str());
}

// recipe_text_of_file(text, file, runs_as) -> str: an fp8lab recipe or an accelerate config (told
// apart as `fp8lab explain` does; `file` names it in messages) as the text of the recipe to run.
PyObject* recipe_text_of_file(PyObject*, PyObject* args) {
  const char *text = nullptr, *file = nullptr, *runs_as = nullptr;
  if (!PyArg_ParseTuple(args, "sss:recipe_text_of_file", &text, &file, &runs_as)) return nullptr;
  try {
    return source_recipe_text(recipes::source_from_text(text, file), runs_as);
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

// recipe_text_of_environment(env: dict[str, str], runs_as) -> str: the ACCELERATE_FP8_* entries
// of env, read as `fp8lab run --env` and `fp8lab explain --env` read the process environment.
PyObject* recipe_text_of_environment(PyObject*, PyObject* args) {
  PyObject* env = nullptr;
  const char* runs_as = nullptr;
  if (!PyArg_ParseTuple(args, "O!s:recipe_text_of_environment", &PyDict_Type, &env, &runs_as)) {
    return nullptr;
  }
  std::map<std::string, std::string> variables;
  PyObject *key = nullptr, *value = nullptr;
  Py_ssize_t pos = 0;
  while (PyDict_Next(env, &pos, &key, &value)) {
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
    const char* v = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : nullptr;
    if (k == nullptr || v == nullptr) {
      if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_TypeError,
                        "recipe_text_of_environment: env holds a key or value that is not a str; "
                        "accepted: a dict of str to str, as os.environ");
      }
      return nullptr;
    }
    variables.emplace(k, v);
  }
  try {
    return source_recipe_text(recipes::environment_source(variables), runs_as);
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

// The strings of a Python list or tuple of str, or false with TypeError naming `what`.
bool string_list(PyObject* list, const char* what, std::vector<std::string>& out) {
  if (!PyList_Check(list) && !PyTuple_Check(list)) {
    PyErr_Format(PyExc_TypeError, "keep_high_precision: %s is a %s; accepted: a list of str", what,
                 Py_TYPE(list)->tp_name);
    return false;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(list, i);
    const char* text = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : nullptr;
    if (text == nullptr) {
      if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError,
                     "keep_high_precision: %s[%zd] is a %s; accepted: a str (a regular "
                     "expression over whole Linear names)",
                     what, i, Py_TYPE(item)->tp_name);
      }
      return false;
    }
    out.emplace_back(text);
  }
  return true;
}

// recipe_keep_high_precision(recipe, layers, fprop, dgrad, wgrad) -> str: the recipe text with
// these patterns added to its keep_high_precision lists; recipes/ checks each regex as it reads
// the text back.
PyObject* recipe_keep_high_precision(PyObject*, PyObject* args) {
  const char* text = nullptr;
  PyObject* lists[4] = {};
  if (!PyArg_ParseTuple(args, "sOOOO:recipe_keep_high_precision", &text, &lists[0], &lists[1],
                        &lists[2], &lists[3])) {
    return nullptr;
  }
  try {
    recipes::Recipe r = *parsed_recipe(text);
    recipes::KeepHighPrecision& keep = r.keep_high_precision;
    std::vector<std::string>* targets[4] = {&keep.layers, &keep.fprop, &keep.dgrad, &keep.wgrad};
    const char* names[4] = {"layers", "fprop", "dgrad", "wgrad"};
    for (int i = 0; i < 4; ++i) {
      if (!string_list(lists[i], names[i], *targets[i])) return nullptr;
    }
    keep = recipes::canonical_keep_high_precision(std::move(keep));
    const std::string written = recipes::recipe_file_text(r);
    parsed_recipe(written);  // the regexes are checked when read
    return PyUnicode_FromString(written.c_str());
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

// recipe_unmatched_keep_patterns(recipe, linears) -> list[str]: the keep_high_precision patterns
// that match none of these Linear names (recipes::unmatched_keep_patterns, the rule the C++
// convert_model warns by), for the Python convert_model's warning.
PyObject* recipe_unmatched_keep_patterns(PyObject*, PyObject* args) {
  const char* text = nullptr;
  PyObject* list = nullptr;
  if (!PyArg_ParseTuple(args, "sO:recipe_unmatched_keep_patterns", &text, &list)) return nullptr;
  std::vector<std::string> linears;
  if (!string_list(list, "linears", linears)) return nullptr;
  try {
    return str_list(recipes::unmatched_keep_patterns(*parsed_recipe(text), linears));
  } catch (const std::exception& e) {
    return value_error(e);
  }
}

PyMethodDef methods[] = {
    {"plan", plan, METH_VARARGS,
     "plan(recipe, operand, gemm) -> dict: how the recipe quantizes that operand of that GEMM "
     "(recipes/lowering's QuantizePlan)."},
    {"recipe_info", recipe_info, METH_VARARGS,
     "recipe_info(recipe) -> dict: scaling, canonical string, describe, use_autocast_during_eval "
     "and module_filter of the recipe text (recipes/' reader; ValueError with its message)."},
    {"is_accelerate_config", is_accelerate_config, METH_VARARGS,
     "is_accelerate_config(text) -> bool: whether the text is an accelerate config (as "
     "fp8lab explain tells them apart) rather than an fp8lab recipe."},
    {"gemm_operands", gemm_operands, METH_VARARGS,
     "gemm_operands(gemm) -> ((a, a_k_is_cols), (b, b_k_is_cols)): the GEMM's operands in "
     "order and whether K is each one's stored columns."},
    {"recipe_text_of_file", recipe_text_of_file, METH_VARARGS,
     "recipe_text_of_file(text, file, runs_as) -> str: the recipe fp8lab runs for an fp8lab "
     "recipe or accelerate config text (runs_as: asked or upstream), as recipe text."},
    {"recipe_text_of_environment", recipe_text_of_environment, METH_VARARGS,
     "recipe_text_of_environment(env, runs_as) -> str: the recipe of env's ACCELERATE_FP8_* "
     "variables, as `fp8lab run --env` reads them, as recipe text."},
    {"recipe_keep_high_precision", recipe_keep_high_precision, METH_VARARGS,
     "recipe_keep_high_precision(recipe, layers, fprop, dgrad, wgrad) -> str: the recipe text "
     "with these regexes added to keep_high_precision."},
    {"recipe_for_layer", recipe_for_layer, METH_VARARGS,
     "recipe_for_layer(recipe, layer) -> str: the recipe one Linear runs (its per_role rules "
     "resolved for its name; the text itself without per_role)."},
    {"recipe_unmatched_keep_patterns", recipe_unmatched_keep_patterns, METH_VARARGS,
     "recipe_unmatched_keep_patterns(recipe, linears) -> list[str]: the keep_high_precision "
     "patterns that match none of these Linear names (each once)."},
    {"quantize_stats", quantize_stats, METH_VARARGS,
     "quantize_stats(x, rows, cols, recipe, operand, gemm, scale=None) -> dict: what one quantize "
     "of x (a contiguous float32 buffer) measures, OperandStats' fields "
     "(experiments/linear/linear_stats.hpp); scale: delayed scaling's current scale."},
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
