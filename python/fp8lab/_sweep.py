"""fp8lab.sweep: the recipes of a sweep file (or dict) on your own PyTorch model, through the
sweep runner of `fp8lab sweep` (docs/python.md, "Sweeps over your model").

The fp8lab command runs the sweep as it runs one over a built-in workload: it expands the
sweep, claims and locks runs, resumes, runs each baseline and null run once per seed, and writes
the run records, the Parquet per-layer sidecars, results.jsonl, summary.csv, contrasts.csv and
the reports with the paired verdicts. Its workload is `python`: each run's process starts
``python -m fp8lab._trainer`` (this interpreter, this sys.path) to train model_fn(seed) on
data_fn(seed), and that trainer only trains. Python writes no results file.
"""

import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional, Union

import torch


def _importable(fn: Optional[Callable], what: str) -> Optional[str]:
    """'module:qualname' of a function that a fresh interpreter can import, as each run's
    trainer must; else ValueError saying why and what is accepted."""
    if fn is None:
        return None
    if not callable(fn):
        raise TypeError(f"fp8lab.sweep: {what} is {type(fn).__name__}; accepted: a function")
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if module in (None, "__main__") or "<" in qualname:
        raise ValueError(
            f"fp8lab.sweep: {what} {qualname or fn!r} is defined in {module or 'no module'}; each "
            "run trains in its own process, which imports it by name: accepted: a function at "
            "the top level of an importable module (not __main__, a notebook cell, a lambda or a "
            "nested function)"
        )
    return f"{module}:{qualname}"


def _command(command: Optional[str]) -> str:
    found = command or os.environ.get("FP8LAB_CLI") or shutil.which("fp8lab")
    if not found:
        raise RuntimeError(
            "fp8lab.sweep runs the fp8lab command's sweep runner, which was not found: build it "
            "with scripts/build (build/experiments/fp8lab), then set FP8LAB_CLI to it or put it "
            "on PATH"
        )
    return found


def _sweep_text(sweep: Union[str, os.PathLike, dict]) -> str:
    """The sweep as YAML text with workloads: [python] when it names none."""
    if isinstance(sweep, dict):
        d = dict(sweep)
        d.setdefault("workloads", ["python"])
        return json.dumps(d, indent=1) + "\n"  # JSON is YAML
    if isinstance(sweep, (str, os.PathLike)):
        path = Path(sweep)
        if not path.is_file():
            raise ValueError(f"fp8lab.sweep: {path}: no such file; accepted: a sweep file or a dict")
        text = path.read_text()
        if not re.search(r"^workloads\s*:", text, re.MULTILINE):
            text = text.rstrip("\n") + "\nworkloads: [python]\n"
        return text
    raise TypeError(f"fp8lab.sweep: sweep is {type(sweep).__name__}; accepted: a path or a dict")


def sweep(
    sweep: Union[str, os.PathLike, dict],
    model_fn: Callable[[int], torch.nn.Module],
    data_fn: Callable[[int], Iterable],
    out: Union[str, os.PathLike],
    jobs: Optional[int] = None,
    *,
    steps: Optional[int] = None,
    eval_fn: Optional[Callable[[], Iterable]] = None,
    eval_every: Optional[int] = None,
    lr: float = 1e-3,
    optimizer_fn: Optional[Callable] = None,
    resume: bool = False,
    command: Optional[str] = None,
) -> Path:
    """Runs every distinct recipe of ``sweep`` on ``model_fn``'s model beside its baselines and
    writes the results directory ``out``, as ``fp8lab sweep`` does; returns its report.html.

    - ``sweep``: a sweep file's path or the same as a dict (recipes/sweep.hpp: grid, base,
      seeds, baseline_seeds, null_runs, layer_stats_every, hypotheses, ...). Its workloads are
      ``[python]``, added when absent.
    - ``model_fn(seed) -> nn.Module``: a fresh model, a pure function of the seed, whose
      ``forward`` returns the loss of a batch (a scalar, or an object with ``.loss``): it is called
      as ``model(**batch)`` for a dict, ``model(*batch)`` for a tuple or list, else
      ``model(batch)``.
    - ``data_fn(seed) -> iterable of batches``: the training batches, one per step, the same
      for every run of a seed.
    - ``eval_fn() -> iterable of batches``: the fixed eval set, the same for every seed (default:
      the first 4 batches of data_fn(0)). Evaluated every ``eval_every`` steps (default steps // 4)
      and at the last.
    - ``steps``: training steps of every run (default: len(data_fn(0))).
    - ``lr``: the learning rate of fp8lab.optim.AdamW (LibTorch's AdamW, as ``fp8lab run``
      trains; torch.optim.AdamW's defaults otherwise), or ``optimizer_fn(params) ->
      optimizer``, any torch optimizer, in its place.
    - ``jobs``: runs at once (each its own process; default: the runner's choice).
    - ``resume``: continue a sweep into ``out`` (recorded runs are skipped).

    The functions must be importable by a fresh interpreter (each run trains in its own
    process): top-level functions of a module on sys.path. Bad input raises ValueError with the
    runner's message; the fp8lab command comes from ``command``, $FP8LAB_CLI or PATH.
    """
    cli = _command(command)
    workload = {
        "python": sys.executable,
        "model_fn": _importable(model_fn, "model_fn"),
        "data_fn": _importable(data_fn, "data_fn"),
        "eval_fn": _importable(eval_fn, "eval_fn"),
        "optimizer_fn": _importable(optimizer_fn, "optimizer_fn"),
        "lr": lr,
        "eval_every": eval_every,
    }
    if steps is None:
        try:
            steps = len(data_fn(0))
        except TypeError:
            raise ValueError(
                "fp8lab.sweep: steps not given and data_fn(0) has no len(); pass steps=N") from None
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"fp8lab.sweep: steps={steps!r}; accepted: an integer >= 1")
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"fp8lab.sweep: jobs={jobs!r}; accepted: None or an integer >= 1")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # The sweep as the runner reads it, with the model named in it, so that sweep.json's hash of
    # the text refuses a directory of another model's results as it refuses another sweep's.
    text = _sweep_text(sweep) + "".join(
        f"# fp8lab.sweep {k}: {v}\n" for k, v in workload.items() if k != "python")
    # Named by its text, so that a sweep refused for another configuration leaves DIR's own file.
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    sweep_file = out / f"python-sweep-{digest}.yaml"
    sweep_file.write_text(text)
    env = dict(os.environ)
    env["FP8LAB_PYTHON_WORKLOAD"] = json.dumps(workload)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())
    args = [cli, "sweep", str(sweep_file), "--out", str(out), "--steps", str(steps)]
    # Bad input stops before any run, with the runner's message (exit 2).
    check = subprocess.run(args + ["--dry-run"], env=env, capture_output=True, text=True)
    if check.returncode != 0:
        raise ValueError(check.stderr.strip() or check.stdout.strip())
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    if resume:
        args.append("--resume")
    # stderr (progress, errors) passes through as it comes; its last line is the message of a
    # refusal (exit 2: another configuration's DIR, records without resume).
    with subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as done:
        last = collections.deque(maxlen=1)
        for line in done.stderr:
            sys.stderr.write(line)
            last.append(line.strip())
        stdout = done.stdout.read()
    sys.stdout.write(stdout)
    if done.returncode == 2:
        raise ValueError(last[0] if last else f"fp8lab sweep refused {out}")
    if done.returncode not in (0, 1):
        raise RuntimeError(
            f"fp8lab sweep into {out} ended with status {done.returncode} (runs errored or it was "
            "interrupted; its message is above); resume=True continues it")
    lines = [line for line in stdout.splitlines() if line.strip()]
    return Path(lines[-1]) if lines else out / "report.html"
