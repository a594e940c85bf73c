"""fp8lab from Python: its bit-exact FP8 emulator (sim/) and recipes as PyTorch ops.

Importing fp8lab registers ``torch.ops.fp8lab.quantize``, ``dequantize``, ``scaled_mm``,
``high_precision_mm`` and ``delayed_update`` (CPU tensors, run by sim/; docs/python.md has their schemas), with fake
kernels for torch.compile. The functions below are the same ops with Python signatures and
documentation; ``plan`` shows how a recipe quantizes an operand. ``Recipe`` reads and checks
recipes with recipes/' reader; ``convert_model`` swaps a model's nn.Linear layers for
``fp8lab.Linear``, whose GEMMs run through these ops; ``autocast`` turns them to another recipe
or to high precision inside a region; ``layer_stats`` reads a results directory's per-layer
statistics; ``sweep`` runs a sweep of recipes on your own model through fp8lab's sweep runner.
"""

import torch  # first: the extension links this process's LibTorch

from fp8lab._version import __torch_version__, __version__

if torch.__version__ != __torch_version__:
    raise ImportError(
        f"fp8lab {__version__} was built against torch {__torch_version__}, but this process "
        f"has torch {torch.__version__}; reinstall it against this torch: "
        "pip install --no-build-isolation ."
    )

from fp8lab import _C  # noqa: E402  registers torch.ops.fp8lab.*
from fp8lab import _fake  # noqa: E402,F401  their fake kernels
from fp8lab.ops import (  # noqa: E402
    delayed_update,
    dequantize,
    high_precision_mm,
    plan,
    quantize,
    scaled_mm,
)
from fp8lab.recipe import Recipe  # noqa: E402
from fp8lab.linear import Linear  # noqa: E402
from fp8lab.convert import convert_model, has_fp8_layers  # noqa: E402
from fp8lab._autocast import autocast  # noqa: E402
from fp8lab._layer_stats import layer_stats  # noqa: E402
from fp8lab._sweep import sweep  # noqa: E402
from fp8lab import optim  # noqa: E402

__all__ = [
    "__version__",
    "Linear",
    "Recipe",
    "autocast",
    "convert_model",
    "has_fp8_layers",
    "layer_stats",
    "optim",
    "delayed_update",
    "dequantize",
    "high_precision_mm",
    "plan",
    "quantize",
    "scaled_mm",
    "sweep",
]
