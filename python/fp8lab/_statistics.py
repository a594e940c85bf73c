"""Per-call quantization statistics of fp8lab.Linear, for fp8lab.sweep's trainer (_trainer.py).

While a ``collecting(calls, step)`` block is open (in this process: autograd's backward may run
on another thread than the forward), every cast an fp8lab.Linear
makes also appends what sim measured of it (fp8lab._C.quantize_stats: OperandStats' fields, as the
C++ Fp8Linear measures each quantize) to ``calls``. The runner merges a step's calls and writes
the record's rows and the sidecar (experiments/run/python_run.cpp): nothing is summed here.
Outside a block nothing is measured, so training pays for statistics only on the steps that keep
them.
"""

import contextlib

from fp8lab import _C

_target = None  # (calls, step) while collecting


@contextlib.contextmanager
def collecting(calls: list, step: int):
    global _target
    previous = _target
    _target = (calls, step)
    try:
        yield
    finally:
        _target = previous


def record(layer: str, x, recipe: str, operand: str, gemm: str, scale) -> None:
    """Measures the quantize of ``x`` (float32 [rows, cols]) that the Linear just made."""
    if _target is None:
        return
    calls, step = _target
    x = x.detach().contiguous()
    stats = _C.quantize_stats(
        x.numpy(), x.shape[0], x.shape[1], recipe, operand, gemm,
        None if scale is None else float(scale.item()),
    )
    calls.append({"step": step, "layer": layer, "tensor": operand, "gemm": gemm, "stats": stats})
