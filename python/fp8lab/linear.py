"""fp8lab.Linear: an nn.Linear whose three GEMMs run as the recipe lowers them, through the ops.

Forward: fprop Y = X W^T on X and W quantized for fprop; X quantized for wgrad and W for dgrad are
saved for backward. Backward: dY quantized for dgrad and for wgrad; dgrad dX = dY W and wgrad
dW = dY^T X. That is experiments/linear/linear_function.cpp's order of casts and GEMMs. Each plan
comes from recipes/lowering (per layer: keep_high_precision), and each cast and GEMM is sim's
(torch.ops.fp8lab.*). Delayed scaling keeps TE's state per layer: the forward slots {input,
weight}, updated after this layer's forward in a training step, and the backward slot
{grad_output}, updated after its backward. That is TE's timing for a layer that runs once per step.

A GEMM the recipe keeps in high precision runs sim's high-precision GEMM (high_precision_mm,
fp32 operands), as the C++ Fp8Linear does with ConvertOptions' default; the bias gradient is
its fp32 sum over rows in increasing order. Eval outside use_autocast_during_eval runs torch's
F.linear (the C++ one runs sim's high-precision GEMM). Delayed scaling under no_grad with
use_autocast_during_eval is refused.
"""

import torch
import torch.nn.functional as F

from fp8lab import _C
from fp8lab import ops
from fp8lab import _autocast
from fp8lab import _statistics
from fp8lab.recipe import Recipe

_GEMMS = ("fprop", "dgrad", "wgrad")


class _DelayedState:
    """TE's per-layer delayed-scaling state: one history and scale per pass (docs/python.md)."""

    def __init__(self, recipe: str, length: int):
        self.recipe = recipe
        self.forward = [torch.zeros(length, 2), torch.ones(2), 0]  # slots: input, weight
        self.backward = [torch.zeros(length, 1), torch.ones(1), 0]  # slot: grad_output

    def scale(self, operand: str) -> torch.Tensor:
        if operand == "grad_output":
            return self.backward[1][0:1]
        return self.forward[1][0:1] if operand == "input" else self.forward[1][1:2]

    def update(self, state: list, operand: str, amax: list) -> None:
        history, scale, count = state
        state[0], state[1] = ops.delayed_update(
            history, scale, torch.stack(amax), self.recipe, operand, count
        )
        state[2] = count + 1


class _Lowering:
    """One recipe as one Linear runs it: which GEMMs run FP8 (its plans for this layer's name)
    and, for delayed scaling, the layer's state under that recipe."""

    def __init__(self, recipe: Recipe, name: str):
        # The recipe this Linear runs: with per_role rules, those that match its name
        # (recipes::for_layer); the text itself otherwise.
        self.recipe = _C.recipe_for_layer(recipe.text, name)
        self.name = name
        operands = {"fprop": "input", "dgrad": "grad_output", "wgrad": "input"}
        self.runs_fp8 = {
            g: ops.plan(self.recipe, operands[g], g, name)["runs_fp8"] for g in _GEMMS
        }
        delayed = ops.plan(self.recipe, "input", "fprop").get("delayed")
        self.delayed = _DelayedState(self.recipe, delayed["amax_history_len"]) if delayed else None
        self.use_autocast_during_eval = recipe._info["use_autocast_during_eval"]


class _HighPrecision:
    """A disabled fp8lab.autocast region: every GEMM in high precision, nothing recorded."""

    recipe = ""
    runs_fp8 = {g: False for g in _GEMMS}
    delayed = None


class _Fp8LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, lowering):
        recipe, fp8, delayed = lowering.recipe, lowering.runs_fp8, lowering.delayed
        amax = {"input": torch.zeros(()), "weight": torch.zeros(())}

        def cast(t, operand, gemm):
            scale = delayed.scale(operand) if delayed else None
            codes, scale_inv, a = ops.quantize(t, recipe, operand, gemm, scale)
            _statistics.record(lowering.name, t, recipe, operand, gemm, scale)
            amax[operand] = a  # every cast of one tensor has its amax; 0: never cast this step
            return codes, scale_inv

        if fp8["fprop"]:
            qx, qw = cast(x, "input", "fprop"), cast(weight, "weight", "fprop")
            y = ops.scaled_mm(*qx, *qw, recipe, "fprop", bias)
        else:
            y = ops.high_precision_mm(x, weight, "fprop", bias)
        saved_x = cast(x, "input", "wgrad") if fp8["wgrad"] else (x,)
        saved_w = cast(weight, "weight", "dgrad") if fp8["dgrad"] else (weight,)
        if delayed:  # Linear.forward runs delayed scaling in grad mode only
            delayed.update(delayed.forward, "input", [amax["input"], amax["weight"]])
        ctx.save_for_backward(*saved_x, *saved_w)
        ctx.split = len(saved_x)
        ctx.lowering = lowering
        ctx.has_bias = bias is not None
        return y

    @staticmethod
    def backward(ctx, dy):
        lowering = ctx.lowering
        recipe, fp8, delayed = lowering.recipe, lowering.runs_fp8, lowering.delayed
        saved = ctx.saved_tensors
        saved_x, saved_w = saved[: ctx.split], saved[ctx.split :]
        dy = dy.contiguous()
        amax = torch.zeros(())

        def cast(gemm):
            scale = delayed.scale("grad_output") if delayed else None
            nonlocal amax
            codes, scale_inv, amax = ops.quantize(dy, recipe, "grad_output", gemm, scale)
            _statistics.record(lowering.name, dy, recipe, "grad_output", gemm, scale)
            return codes, scale_inv

        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            if fp8["dgrad"]:
                dx = ops.scaled_mm(*cast("dgrad"), *saved_w, recipe, "dgrad")
            else:
                dx = ops.high_precision_mm(dy, saved_w[0], "dgrad")
        if ctx.needs_input_grad[1]:
            if fp8["wgrad"]:
                dw = ops.scaled_mm(*cast("wgrad"), *saved_x, recipe, "wgrad")
            else:
                dw = ops.high_precision_mm(dy, saved_x[0], "wgrad")
        if ctx.has_bias and ctx.needs_input_grad[2]:
            # The C++ Linear's bias gradient: an fp32 sum over the rows of dY in increasing row
            # order from +0, which is sim's high-precision wgrad of dY against a column of ones
            # (acc = RN(acc + RN(dy * 1)), RN(dy * 1) = dy).
            ones = dy.new_ones(dy.shape[0], 1)
            db = ops.high_precision_mm(dy, ones, "wgrad").reshape(-1)
        if delayed:
            delayed.update(delayed.backward, "grad_output", [amax])
        return dx, dw, db, None


class Linear(torch.nn.Module):
    """An nn.Linear (float32) whose GEMMs follow ``recipe``; ``name`` is its fully qualified name
    (keep_high_precision matches it). Holds the original module's weight and bias Parameters.
    Inside an fp8lab.autocast region, the region's recipe or high precision applies instead."""

    def __init__(self, linear: torch.nn.Linear, recipe: "Recipe | str", name: str = ""):
        super().__init__()
        if linear.weight.dtype != torch.float32:
            raise ValueError(
                f"fp8lab.Linear {name or '(unnamed)'}: weight has dtype {linear.weight.dtype}; "
                "accepted: torch.float32 (sim's quantizers read fp32)"
            )
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        self.name = name
        self.recipe = recipe if isinstance(recipe, Recipe) else Recipe(recipe)
        self._own = _Lowering(self.recipe, name)
        self._lowerings = {self.recipe.text: self._own}  # by recipe text (autocast regions)

    @property
    def _runs_fp8(self) -> dict:
        return self._own.runs_fp8

    @property
    def _delayed(self):
        return self._own.delayed

    def _lowering(self):
        region = _autocast.current()
        if region is None or (region.enabled and region.recipe is None):
            return self._own
        if not region.enabled:
            return _HighPrecision
        if region.recipe.text not in self._lowerings:
            self._lowerings[region.recipe.text] = _Lowering(region.recipe, self.name)
        return self._lowerings[region.recipe.text]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32:
            raise TypeError(
                f"fp8lab.Linear {self.name}: input has dtype {x.dtype}; accepted: torch.float32"
            )
        lowering = self._lowering()
        if lowering is not _HighPrecision:
            fp8 = torch.is_grad_enabled() or lowering.use_autocast_during_eval
            if not fp8:
                return F.linear(x, self.weight, self.bias)  # TE: no FP8 outside training
            if lowering.delayed and not torch.is_grad_enabled():
                raise NotImplementedError(
                    f"fp8lab.Linear {self.name}: delayed scaling under no_grad with "
                    "use_autocast_during_eval (casts that record an amax without an update) is "
                    "not built yet from Python"
                )
        shape = x.shape
        x2 = x.reshape(-1, self.in_features).contiguous()
        y = _Fp8LinearFunction.apply(x2, self.weight, self.bias, lowering)
        return y.reshape(*shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, scaling={self.recipe.scaling}"
        )
