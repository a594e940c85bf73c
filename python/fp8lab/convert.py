"""fp8lab.convert_model: swap a model's nn.Linear layers for fp8lab.Linear, as accelerate's
convert_model and torchao's convert_to_float8_training do, with the recipe's module_filter.

Which modules are Linears is the peers' rule: ``isinstance(module, torch.nn.Linear)``, so
subclasses count, e.g. the NonDynamicallyQuantizableLinear that is torch.nn.MultiheadAttention's
out_proj. Each peer reads it so in its own code:
  - accelerate + torchao (Recipe.ao, the torchao scalings): huggingface/accelerate
    src/accelerate/utils/ao.py, find_first_last_linear_layers (first and last isinstance Linear
    of named_modules()) and filter_linear_layers (dims % 16 of an isinstance Linear, then the
    first/last names); torchao swaps what that filter allows: pytorch/ao
    torchao/float8/float8_linear_utils.py, convert_to_float8_training -> swap_linear_layers
    (isinstance(module, nn.Linear) over named_children(), post-order).
  - accelerate + TE (Recipe.te, the TE scalings): huggingface/accelerate
    src/accelerate/utils/transformer_engine.py, convert_model (isinstance(module, nn.Linear) over
    named_children(), the bare return on dims % 16, no first/last rule). TE itself has no
    conversion function: its users build te.Linear themselves.

The filter is experiments/linear/convert_model.hpp's, in the same order, over the Python module
tree (the C++ one walks torch::nn::Module and cannot see a Python model):
  1. require_dims_divisible_by_16: skip a Linear whose in_features or out_features % 16 != 0;
     with skip_later_siblings_after_indivisible, its later siblings are neither converted nor
     visited either (accelerate's bare return);
  2. skip_first_last_linear: skip the first and the last nn.Linear (isinstance) of
     named_modules();
  3. skip_names: skip names matching a glob (* any run of characters, ? one character);
  4. module_filter(module, name), when given (else the recipe's module_filter_func, from
     Recipe.ao): skip where it returns False (accelerate's module_filter_func and torchao's
     module_filter_fn take (module, fqn)).
A keep_high_precision pattern that matches none of the model's Linears keeps nothing: a
UserWarning says so (recipes::unmatched_keep_patterns, the rule of the C++ convert_model's
warning), once per pattern and model under Python's default warning filter.

A converted Linear whose forward does not run in the model's first training forward (grad
enabled, model.training) gives a UserWarning naming it, once per module: its parent uses its
Parameters some other way, so its GEMMs run in high precision, not in the recipe. The case the
peers share is MultiheadAttention's out_proj: torch.nn.MultiheadAttention passes
out_proj.weight and out_proj.bias to F.multi_head_attention_forward and never calls out_proj,
so where torchao's convert_to_float8_training (no filter, or a filter that allows it) or
accelerate's TE convert_model swaps it for an FP8 module, that layer stays high precision in
effect. The check hooks the model's forward until that first training forward, then removes
its hooks.
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
    # isinstance, as accelerate's find_first_last_linear_layers and torchao's swap_linear_layers
    # (module docstring); fp8lab.Linear is no nn.Linear, so a converted model converts no more.
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
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
            if not isinstance(child, torch.nn.Linear):
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
            new = Linear(child, recipe, name)
            setattr(parent, child_name, new)
            converted.append(name)
            new_modules.append((new, parent))

    new_modules: list[tuple[Linear, torch.nn.Module]] = []
    visit(model, "")
    if new_modules:
        _warn_uncalled_after_first_training_forward(model, new_modules)
    return converted


def _uncalled_message(linear: Linear, parent: torch.nn.Module) -> str:
    message = (f"fp8lab.convert_model: converted Linear '{linear.name}' did not run its forward "
               "in the model's first training forward pass, so its GEMMs ran in high precision, "
               f"not in the recipe ({linear.recipe.scaling})")
    if isinstance(parent, torch.nn.MultiheadAttention) and parent.out_proj is linear:
        message += (": torch.nn.MultiheadAttention passes out_proj.weight and out_proj.bias to "
                    "F.multi_head_attention_forward and never calls out_proj. torchao's "
                    "convert_to_float8_training and accelerate's TE convert_model convert this "
                    "layer too, where their filter allows it, and it stays high precision there "
                    "as well")
    return message


def _warn_uncalled_after_first_training_forward(
    model: torch.nn.Module, new_modules: list[tuple[Linear, torch.nn.Module]]
) -> None:
    called: set[int] = set()
    handles = []

    def seen(module: torch.nn.Module, args: tuple) -> None:
        called.add(id(module))

    def check(module: torch.nn.Module, args: tuple, output: object) -> None:
        if not (module.training and torch.is_grad_enabled()):
            called.clear()  # an eval or no_grad forward: wait for a training one
            return
        for handle in handles:
            handle.remove()
        for linear, parent in new_modules:
            if id(linear) not in called and not getattr(linear, "_warned_uncalled", False):
                linear._warned_uncalled = True
                warnings.warn(_uncalled_message(linear, parent), UserWarning, stacklevel=2)

    handles.extend(linear.register_forward_pre_hook(seen) for linear, _ in new_modules)
    handles.append(model.register_forward_hook(check))


def has_fp8_layers(model: torch.nn.Module) -> bool:
    """Whether any module of ``model`` (itself included) is an fp8lab.Linear."""
    return any(isinstance(m, Linear) for m in model.modules())
