"""Fake (meta) kernels of torch.ops.fp8lab.*: output shapes and dtypes without data, for
torch.compile and FakeTensor tracing. Shapes come from the C++ lowering (fp8lab._C.plan,
fp8lab._C.gemm_operands), never from a Python copy of it; torch.library.opcheck compares them
with the CPU kernels' outputs (tests/python/test_ops.py)."""

import torch

from fp8lab import _C


def _blocks(total, block):
    # sim::QuantizedTensor::scale_rows / scale_cols: ceil(total / block), 0 = the whole dimension.
    return 1 if block == 0 else -(-total // block)


@torch.library.register_fake("fp8lab::quantize")
def _quantize_fake(x, recipe, operand, gemm, scale=None):
    plan = _C.plan(recipe, operand, gemm)
    rows, cols = x.shape
    codes = x.new_empty((rows, cols), dtype=torch.uint8)
    scale_inv = x.new_empty(
        (_blocks(rows, plan["block"][0]), _blocks(cols, plan["block"][1])), dtype=torch.float32
    )
    return codes, scale_inv, x.new_empty((), dtype=torch.float32)


@torch.library.register_fake("fp8lab::dequantize")
def _dequantize_fake(codes, scale_inv, recipe, operand, gemm):
    _C.plan(recipe, operand, gemm)
    return codes.new_empty(codes.shape, dtype=torch.float32)


@torch.library.register_fake("fp8lab::scaled_mm")
def _scaled_mm_fake(
    a, a_scale_inv, b, b_scale_inv, recipe, gemm, bias=None, accumulation=None, out_dtype=None
):
    (_, a_k_is_cols), (_, b_k_is_cols) = _C.gemm_operands(gemm)
    m = a.shape[0] if a_k_is_cols else a.shape[1]
    n = b.shape[0] if b_k_is_cols else b.shape[1]
    return a.new_empty((m, n), dtype=out_dtype or torch.float32)


@torch.library.register_fake("fp8lab::high_precision_mm")
def _high_precision_mm_fake(a, b, gemm, bias=None, bf16_operands=False, out_dtype=None):
    (_, a_k_is_cols), (_, b_k_is_cols) = _C.gemm_operands(gemm)
    m = a.shape[0] if a_k_is_cols else a.shape[1]
    n = b.shape[0] if b_k_is_cols else b.shape[1]
    return a.new_empty((m, n), dtype=out_dtype or torch.float32)


@torch.library.register_fake("fp8lab::delayed_update")
def _delayed_update_fake(amax_history, scale, amax, recipe, operand, update):
    return torch.empty_like(amax_history), torch.empty_like(scale)
