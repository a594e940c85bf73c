"""The ops of torch.ops.fp8lab with Python signatures and documentation (docs/python.md).

Every op names the quantization it runs as (recipe, operand, gemm): ``recipe`` is the text of an
fp8lab recipe file (YAML; one line works: ``"{scaling: mxfp8, mx_scale_mode: floor}"``; empty is
the default recipe), read by recipes/ with the CLI's fields, values and messages; ``operand`` is
``"input"``, ``"weight"`` or ``"grad_output"`` and ``gemm`` is ``"fprop"``, ``"dgrad"`` or
``"wgrad"``. recipes/lowering turns the three into the plan (element format, scale blocks along
the GEMM's K, scale rule) in C++, as it does for the CLI's training runs.
"""

from typing import Optional

import torch

from fp8lab import _C


def plan(recipe: str, operand: str, gemm: str, layer: Optional[str] = None) -> dict:
    """How ``recipe`` quantizes ``operand`` of ``gemm``: the lowering's plan as a dict (kind,
    format, block rows x cols with 0 for a whole dimension, axis, pow2, mx_mode,
    torchao_version, nvfp4_mode, runs_fp8, the GEMM's accumulation, k_is_cols; and ``delayed``
    settings for delayed scaling). With ``layer`` (a Linear's fully qualified name), the recipe's
    keep_high_precision patterns apply to it. Raises ValueError with recipes/' message for a bad
    recipe or name."""
    return _C.plan(recipe, operand, gemm, layer)


def quantize(
    x: torch.Tensor, recipe: str, operand: str, gemm: str, scale: Optional[torch.Tensor] = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Quantize ``x`` (float32, 2-D [rows, cols], contiguous, CPU) as ``recipe`` quantizes
    ``operand`` for ``gemm``. Returns ``(codes, scale_inv, amax)``: uint8 codes [rows, cols] in
    x's layout, float32 ``scale_inv`` with one dequantization factor per scale block
    [ceil(rows / block rows), ceil(cols / block cols)] (x ~= decode(codes) * scale_inv), and the
    float32 amax of x (NaN ignored) as a 0-d tensor.

    Delayed scaling casts with the slot's current ``scale`` (float32, one element; the state of
    ``delayed_update``); every other scaling computes its own and takes ``scale=None``."""
    return torch.ops.fp8lab.quantize(x, recipe, operand, gemm, scale)


def dequantize(
    codes: torch.Tensor, scale_inv: torch.Tensor, recipe: str, operand: str, gemm: str
) -> torch.Tensor:
    """decode(codes) * scale_inv per element (float32), with the element format and scale
    blocks of ``recipe``'s plan for ``operand`` of ``gemm`` (TE's dequantization: one fp32
    multiply)."""
    return torch.ops.fp8lab.dequantize(codes, scale_inv, recipe, operand, gemm)


def scaled_mm(
    a: torch.Tensor,
    a_scale_inv: torch.Tensor,
    b: torch.Tensor,
    b_scale_inv: torch.Tensor,
    recipe: str,
    gemm: str,
    bias: Optional[torch.Tensor] = None,
    accumulation: Optional[str] = None,
    out_dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    """The quantized GEMM ``gemm`` with sim's accumulation model: C[M, N] = sum over K of
    a(m, k) * b(n, k), from operands as ``quantize`` returns them for that GEMM, stored as the
    Linear stores them (fprop: a = input [M, K], b = weight [N, K]; dgrad: a = grad_output
    [M, N], b = weight [N, K]; wgrad: a = grad_output [M, N], b = input [M, K]).
    ``accumulation``: ``"hopper_fast"``, ``"hopper_split"``, ``"fp32_seq"`` or ``"exact"``;
    None takes the recipe's ``gemm.<fprop|dgrad|wgrad>``. ``bias``: float32 [N] or None.
    ``out_dtype``: torch.float32 (default) or torch.bfloat16."""
    return torch.ops.fp8lab.scaled_mm(
        a, a_scale_inv, b, b_scale_inv, recipe, gemm, bias, accumulation, out_dtype
    )


def high_precision_mm(
    a: torch.Tensor,
    b: torch.Tensor,
    gemm: str,
    bias: Optional[torch.Tensor] = None,
    bf16_operands: bool = False,
    out_dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    """The GEMM ``gemm`` in high precision, as the C++ Linear runs a GEMM its recipe keeps in
    high precision (sim::high_precision_gemm): float32 operands stored as for ``scaled_mm``
    (optionally rounded to bf16 first), acc = RN(acc + RN(a * b)) in increasing k, bias in the
    epilogue. ``out_dtype``: torch.float32 (default) or torch.bfloat16."""
    return torch.ops.fp8lab.high_precision_mm(a, b, gemm, bias, bf16_operands, out_dtype)


def delayed_update(
    amax_history: torch.Tensor,
    scale: torch.Tensor,
    amax: torch.Tensor,
    recipe: str,
    operand: str,
    update: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The end-of-pass update of delayed scaling (TE's fused amax and scale update) for the
    slots of one pass, returned as new tensors: ``amax_history`` float32 [amax_history_len,
    slots] (row 0 the running step), ``scale`` float32 [slots], ``amax`` float32 [slots] this
    step's amax per slot as ``quantize`` returned it (merged into row 0 first, NaN ignored).
    ``operand`` names the pass and so its format (input, weight: forward; grad_output:
    backward); ``update`` is this pass's update count (0, 1, 2, ...: the interval rule). A
    fresh state is zeros((len, slots)) and ones(slots)."""
    return torch.ops.fp8lab.delayed_update(amax_history, scale, amax, recipe, operand, update)
