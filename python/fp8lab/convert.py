"""fp8lab.convert_model: swap a model's nn.Linear layers for fp8lab.Linear, as accelerate's
convert_model and torchao's convert_to_float8_training do, with the recipe's module_filter.

The filter is experiments/fp8/convert_model.hpp's, in the same order, over the Python module
tree (the C++ one walks torch::nn::Module and cannot see a Python model):
  1. require_dims_divisible_by_16: skip a Linear whose in_features or out_features % 16 != 0;
     with skip_later_siblings_after_indivisible, its later siblings are neither converted nor
     visited either (accelerate's bare return);
  2. skip_first_last_linear: skip the first and the last nn.Linear of named_modules();
  3. skip_names: skip names matching a glob (* any run of characters, ? one character);
  4. module_filter(module, name), when given (else the recipe's module_filter_func, from
     Recipe.ao): skip where it returns False (accelerate's module_filter_func and torchao's
     module_filter_fn take (module, fqn)).
A keep_high_precision pattern that matches none of the model's Linears keeps nothing: a
UserWarning says so (recipes::unmatched_keep_patterns, the rule of the C++ convert_model's
warning), once per pattern and model under Python's default warning filter.
"""

import re
import warnings
from typing import Callable, Optional

import torch

from fp8lab import _C
from fp8lab.linear import Linear
from fp8lab.recipe import Recipe


def _glob(pattern: str) -> "re.Pattern[str]":
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                              for c in pattern) + r"\Z", re.DOTALL)


def convert_model(
    model: torch.nn.Module,
    recipe: "Recipe | str",
    module_filter: Optional[Callable[[torch.nn.Module, str], bool]] = None,
) -> list[str]:
    """Replace, in place, each nn.Linear of ``model`` that the filter allows by an fp8lab.Linear
    running ``recipe`` (its own scaling state; the same weight and bias Parameters, so
    optimizers built before keep working). Returns the converted Linears' names in visiting
    order. Raises ValueError for a bad recipe (recipes/' message) or a non-float32 Linear."""
    recipe = recipe if isinstance(recipe, Recipe) else Recipe(recipe)
    if module_filter is None:
        module_filter = recipe.module_filter_func
    rule = recipe._info["module_filter"]
    linears = [n for n, m in model.named_modules() if type(m) is torch.nn.Linear]
    first_last = {linears[0], linears[-1]} if linears and rule["skip_first_last_linear"] else set()
    if linears:
        for pattern in _C.recipe_unmatched_keep_patterns(recipe.text, linears):
            warnings.warn(f"keep_high_precision pattern '{pattern}' matches none of the model's "
                          f"{len(linears)} Linears (the first is '{linears[0]}'); it keeps "
                          "nothing in high precision", UserWarning, stacklevel=2)
    skip_globs = [_glob(p) for p in rule["skip_names"]]
    converted: list[str] = []

    def visit(parent: torch.nn.Module, prefix: str) -> None:
        for child_name, child in list(parent.named_children()):
            name = prefix + child_name
            if type(child) is not torch.nn.Linear:
                visit(child, name + ".")
                continue
            if rule["require_dims_divisible_by_16"] and (
                child.in_features % 16 or child.out_features % 16
            ):
                if rule["skip_later_siblings_after_indivisible"]:
                    return
                continue
            if name in first_last or any(g.match(name) for g in skip_globs):
                continue
            if module_filter is not None and not module_filter(child, name):
                continue
            setattr(parent, child_name, Linear(child, recipe, name))
            converted.append(name)

    visit(model, "")
    return converted


def has_fp8_layers(model: torch.nn.Module) -> bool:
    """Whether any module of ``model`` (itself included) is an fp8lab.Linear."""
    return any(isinstance(m, Linear) for m in model.modules())
