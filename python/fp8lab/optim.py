"""fp8lab.optim: the optimizer and learning-rate schedule of ``fp8lab run``, so that a Python
training loop gets its bits (docs/python.md, "Same bits as fp8lab run").

``AdamW`` steps LibTorch's own ``torch::optim::AdamW`` (python/csrc/optim.cpp) over the
parameters: torch.optim.AdamW's Python update (lerp_) differs from it in the last bits.
``learning_rate`` is the warm-up and cosine of a workload's TrainingSchedule, computed by the C++
function that ``fp8lab run`` calls.
"""

from typing import Iterable

import torch


class AdamW(torch.optim.Optimizer):
    """AdamW run by LibTorch (torch::optim::AdamW), with torch.optim.AdamW's defaults.

    One parameter group. The learning rate is read from ``param_groups[0]["lr"]`` at each
    ``step()``, so torch's lr schedulers work. ``clip_grad_norm(max_norm)`` is LibTorch's
    ``clip_grad_norm_`` over the same parameters. The moments live in C++: ``state_dict()``
    does not hold them, and ``load_state_dict`` is refused.
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float = 1e-3,
                 betas: tuple = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2):
        params = list(params)
        if any(isinstance(p, dict) for p in params):
            raise TypeError("fp8lab.optim.AdamW: parameter groups (dicts) are not supported; "
                            "accepted: an iterable of tensors (one group)")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))
        self._libtorch = torch.classes.fp8lab.AdamW(
            self.param_groups[0]["params"], float(lr), float(betas[0]), float(betas[1]),
            float(eps), float(weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._libtorch.set_lr(float(self.param_groups[0]["lr"]))
        self._libtorch.step()
        return loss

    def clip_grad_norm(self, max_norm: float) -> float:
        """Clips the gradients' global L2 norm to max_norm (LibTorch's clip_grad_norm_, as
        ``fp8lab run`` with a schedule's grad_clip); returns the norm before clipping."""
        return self._libtorch.clip_grad_norm(float(max_norm))

    def load_state_dict(self, state_dict):
        raise NotImplementedError("fp8lab.optim.AdamW keeps its moments in LibTorch; "
                                  "load_state_dict is not supported")


def learning_rate(lr: float, warmup_steps: int, final_lr_fraction: float, step: int,
                  steps: int) -> float:
    """The learning rate of ``fp8lab run`` at ``step`` of ``steps``: linear warm-up over
    ``warmup_steps``, then a cosine down to ``lr * final_lr_fraction`` at the last step
    (experiments/workloads/learning_rate.hpp)."""
    return torch.ops.fp8lab.learning_rate(float(lr), int(warmup_steps), float(final_lr_fraction),
                                          int(step), int(steps))
