"""fp8lab.autocast: where fp8lab.Linear layers run FP8, as TE's fp8_autocast(enabled, fp8_recipe)
does for TE modules.

A converted model runs FP8 in training without any region: convert_model follows accelerate,
whose contextual_fp8_autocast wraps the model's forward (experiments/linear/autocast.hpp). A region
changes that for the fp8lab.Linear calls inside it, on this thread; the innermost region decides:
- ``enabled=False``: the Linears run every GEMM in high precision (sim's high-precision GEMM,
  as the C++ Fp8Linear outside a region) and record no amax;
- ``recipe``: the Linears run that recipe instead of their own (each keeps a separate scaling
  state per recipe); None keeps each Linear's own.
Delayed scaling keeps the per-layer update timing of fp8lab.Linear (docs/python.md); a region
does not move it to the region's exit as TE does.
"""

import contextlib
import threading
from typing import Iterator, NamedTuple, Optional

from fp8lab.recipe import Recipe


class Region(NamedTuple):
    enabled: bool
    recipe: Optional[Recipe]


_regions = threading.local()


def current() -> Optional[Region]:
    """The innermost region of this thread, or None outside every region."""
    stack = getattr(_regions, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def autocast(recipe: "Recipe | str | None" = None, enabled: bool = True) -> Iterator[None]:
    """Run the fp8lab.Linear layers called inside with ``recipe`` (a Recipe or recipe text; None:
    each layer's own) when ``enabled``, and in high precision when not. Regions nest; the
    innermost decides. TypeError for an ``enabled`` that is not a bool, ValueError with
    recipes/' message for a bad recipe."""
    if not isinstance(enabled, bool):
        raise TypeError(f"fp8lab.autocast: enabled is a {type(enabled).__name__}; accepted: bool")
    if recipe is not None and not isinstance(recipe, Recipe):
        recipe = Recipe(recipe)  # TypeError / ValueError naming what is accepted
    stack = getattr(_regions, "stack", None)
    if stack is None:
        stack = _regions.stack = []
    stack.append(Region(enabled, recipe))
    try:
        yield
    finally:
        stack.pop()


__all__ = ["autocast", "current", "Region"]
