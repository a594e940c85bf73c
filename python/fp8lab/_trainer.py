"""python -m fp8lab._trainer REQUEST: trains one run of fp8lab.sweep (docs/python.md, "Sweeps over
your model"), started by the run's process (`fp8lab run`, experiments/run/python_run.cpp).

It only trains. It reads the request (kind baseline, fp8 or null; seed; steps; the recipe's
text; the steps whose parameters to snapshot), builds model_fn(seed), converts it with the
recipe (fp8lab.convert_model), or rounds its parameters once to bf16 for the null run, trains it
with AdamW (LibTorch's, fp8lab.optim.AdamW) on data_fn(seed) for the steps, evaluates it on the fixed eval set, and writes
result.json and the snapshots into the request's output directory: every step's loss, the eval
batches' losses, each quantize call's statistics (fp8lab._C.quantize_stats) and the flat
parameters and gradients. The runner makes the record, the sidecar, the divergence and the
instability verdict from them. An exception becomes {"error": ...}: the runner records the run
as failed with that message.
"""

import importlib
import itertools
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

import torch

import fp8lab
from fp8lab import _statistics

_GEMMS = ("fprop", "dgrad", "wgrad")


def resolve(name: str):
    """'package.module:qualified.name' -> the object."""
    module, _, qualname = name.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def batch_loss(model, batch) -> torch.Tensor:
    """The model's loss on a batch: model(**batch) for a dict, model(*batch) for a tuple or list,
    else model(batch); its value, or its .loss (transformers' outputs), is the scalar loss."""
    if isinstance(batch, dict):
        out = model(**batch)
    elif isinstance(batch, (tuple, list)):
        out = model(*batch)
    else:
        out = model(batch)
    loss = getattr(out, "loss", out)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise TypeError(
            f"the model's forward returned {type(out).__name__}; accepted: the scalar loss, or an "
            "object with .loss (fp8lab.sweep: model(batch) returns the loss)"
        )
    return loss.reshape(())


def tokens_in(batch) -> int:
    """Tokens of a batch, for tokens/s: the first tensor's elements when it holds integers
    (token ids), else its first dimension (samples)."""
    values = batch.values() if isinstance(batch, dict) else (
        batch if isinstance(batch, (tuple, list)) else [batch])
    for v in values:
        if isinstance(v, torch.Tensor):
            return v.numel() if not v.is_floating_point() else (v.shape[0] if v.dim() else 1)
    return 1


def _number(v: float):
    """JSON has no NaN or Infinity: the runner reads these strings (python_run.cpp, number)."""
    if math.isfinite(v):
        return v
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def _clean(obj):
    if isinstance(obj, float):
        return _number(obj)
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _snapshot(model, names, path: Path) -> None:
    """Flat float32 weights then gradients of the named parameters (a missing gradient: zeros),
    as the C++ loop's snapshot."""
    parameters = dict(model.named_parameters())
    missing = [n for n in names if n not in parameters]
    if missing:
        raise ValueError(f"the model has no parameter {missing[0]!r} that the baseline has")
    with torch.no_grad():
        weights = [parameters[n].detach().reshape(-1).float() for n in names]
        grads = [
            (parameters[n].grad if parameters[n].grad is not None
             else torch.zeros_like(parameters[n])).detach().reshape(-1).float()
            for n in names
        ]
        torch.cat(weights + grads).numpy().tofile(path)


def train(request: dict, workload: dict) -> dict:
    torch.set_num_threads(1)  # as `fp8lab run`: torch's reductions keep their bits at 1 thread
    out = Path(request["output"])
    kind, seed = request["kind"], request["seed"]
    steps = request["steps"]
    if steps is None:
        raise ValueError("fp8lab.sweep passes the number of steps; this run has none")
    model_fn = resolve(workload["model_fn"])
    data_fn = resolve(workload["data_fn"])
    model = model_fn(seed)
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model_fn({seed}) returned {type(model).__name__}; accepted: an nn.Module")
    parameter_count = sum(p.numel() for p in model.parameters())
    model_class = type(model).__name__
    fp8_gemms = {}
    if kind == "null":  # experiments/run/null_run.hpp: initial weights rounded once to bf16
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).to(p.dtype))
    elif kind == "fp8":
        fp8lab.convert_model(model, fp8lab.Recipe(request["recipe"]))
        for m in model.modules():
            if isinstance(m, fp8lab.Linear):
                fp8_gemms[m.name] = [g for g in _GEMMS if m._runs_fp8[g]]
    model.train()
    names = request.get("parameter_names") or sorted(
        n for n, p in model.named_parameters() if p.requires_grad)
    trained = dict(model.named_parameters())
    snapshot_steps = request.get("snapshot_steps")
    optimizer_fn = workload.get("optimizer_fn")
    params = [p for p in model.parameters() if p.requires_grad]
    # LibTorch's AdamW, the optimizer of `fp8lab run` (fp8lab.optim), unless the user gives one.
    optimizer = (resolve(optimizer_fn)(params) if optimizer_fn
                 else fp8lab.optim.AdamW(params, lr=workload.get("lr", 1e-3)))
    eval_every = workload.get("eval_every") or max(1, steps // 4)
    eval_fn = workload.get("eval_fn")
    eval_batches = (list(resolve(eval_fn)()) if eval_fn
                    else list(itertools.islice(iter(data_fn(0)), 4)))
    every = request.get("layer_stats_every", 0)

    def is_eval(step):
        return step % eval_every == 0 or step + 1 == steps

    def keeps_stats(step):
        return is_eval(step) or (every > 0 and (step % every == 0 or step + 1 == steps))

    losses, seconds, evals, calls, snapshots = [], [], [], [], []
    train_seconds, tokens = 0.0, 1
    batches = iter(data_fn(seed))
    for step in range(steps):
        try:
            batch = next(batches)
        except StopIteration:
            raise ValueError(
                f"data_fn({seed}) gave {step} batches; the sweep trains {steps} steps") from None
        if step == 0:
            tokens = tokens_in(batch)
        start = time.perf_counter()
        optimizer.zero_grad()
        if kind == "fp8" and keeps_stats(step):
            with _statistics.collecting(calls, step):
                loss = batch_loss(model, batch)
                value = loss.item()
                if math.isfinite(value):
                    loss.backward()
        else:
            loss = batch_loss(model, batch)
            value = loss.item()
            if math.isfinite(value):
                loss.backward()
        losses.append(value)
        if not math.isfinite(value):
            train_seconds += time.perf_counter() - start
            break
        optimizer.step()
        elapsed = time.perf_counter() - start
        train_seconds += elapsed
        seconds.append(elapsed)
        if is_eval(step):
            model.eval()
            with torch.no_grad():
                batch_losses = [batch_loss(model, b).item() for b in eval_batches]
            model.train()
            evals.append({"step": step, "batch_losses": batch_losses})
            if snapshot_steps is None or step in snapshot_steps:
                name = f"snapshot-{step}.bin"
                _snapshot(model, names, out / name)
                snapshots.append({"step": step, "file": name})
    return {
        "model_class": model_class,
        "parameter_count": parameter_count,
        "parameter_names": names,
        "parameter_count_trained": sum(trained[n].numel() for n in names),
        "torch": torch.__version__,
        "steps_planned": steps,
        "tokens_per_step": tokens,
        "train_loss": losses,
        "step_seconds": seconds,
        "train_seconds": train_seconds,
        "eval": evals,
        "layers": calls,
        "snapshots": snapshots,
        "fp8_gemms": fp8_gemms,
    }


def main(argv) -> int:
    request = json.loads(Path(argv[1]).read_text())
    try:
        result = train(request, json.loads(os.environ["FP8LAB_PYTHON_WORKLOAD"]))
        status = 0
    except Exception as e:  # noqa: BLE001  any failure of the user's code is the run's result
        traceback.print_exc()
        result = {"error": f"{type(e).__name__}: {e}"}
        status = 1
    (Path(request["output"]) / "result.json").write_text(json.dumps(_clean(result)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
