"""The Python path gives the same loss bits, step by step, as `fp8lab run` on the built-in mlp
workload for the same recipe: the C++ workload's initial weights and batches come from
`fp8lab run --export-inputs`, the same model is built as an nn.Module (the same parameter names
and shapes), converted by fp8lab.convert_model with the same recipe and trained with the
schedule of `fp8lab run` (warm-up, cosine, gradient clipping) by fp8lab.optim: LibTorch's AdamW
and learning rate."""

import json
import os
import struct
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fp8lab

# 40 steps of the mlp workload (fewer do not tell torch.optim.AdamW from LibTorch's: FP8 casts of
# the weights hide last-bit differences for a while; with it the first loss differs at step 11
# for current HYBRID and 25 for mxfp8), with its warm-up shortened so that the cosine runs too, and
# gradient clipping on (its default is off) so that the clip is compared as well.
STEPS = 40
WORKLOAD = ["--workload", "mlp", "--workload-set", "warmup=2", "--workload-set", "grad_clip=0.5"]
RECIPES = {
    "current-hybrid": {"scaling": "current", "fp8_format": "HYBRID"},
    "mxfp8": {"scaling": "mxfp8"},
}


def command():
    cli = os.environ.get("FP8LAB_CLI")
    if not cli:
        pytest.skip("FP8LAB_CLI is not set (scripts/test sets it to build/experiments/fp8lab)")
    return cli


def fp8lab_run(*args):
    done = subprocess.run([command(), "run", *WORKLOAD, "--steps", str(STEPS), *args],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


class Mlp(torch.nn.Module):
    """experiments/workloads/mlp_workload.cpp's MlpModel: fc1, fc2, fc3 with gelu between, MSE."""

    def __init__(self, parameters):
        super().__init__()
        for name in ("fc1", "fc2", "fc3"):
            out_features, in_features = parameters[f"{name}.weight"].shape
            setattr(self, name, torch.nn.Linear(in_features, out_features))
        with torch.no_grad():
            for name, p in self.named_parameters():
                p.copy_(parameters[name])

    def forward(self, x, target):
        h = F.gelu(self.fc1(x))
        h = F.gelu(self.fc2(h))
        return F.mse_loss(self.fc3(h), target)


def bits(value: float) -> str:
    return struct.pack(">f", value).hex()


def train_in_python(inputs, recipe_text):
    info = json.loads((inputs / "inputs.json").read_text())
    parameters = {n: torch.from_numpy(np.load(inputs / "parameters" / f"{n}.npy"))
                  for n in info["parameters"]}
    model = Mlp(parameters)
    assert [n for n, _ in model.named_parameters()] == info["parameters"]
    fp8lab.convert_model(model, fp8lab.Recipe(recipe_text))
    assert fp8lab.has_fp8_layers(model)
    model.train()
    s = info["schedule"]
    optimizer = fp8lab.optim.AdamW(model.parameters(), lr=s["learning_rate"],
                                   betas=(s["beta1"], s["beta2"]), weight_decay=s["weight_decay"])
    losses = []
    for step in range(info["steps"]):
        x = torch.from_numpy(np.load(inputs / "batches" / f"{step}.input.npy"))
        target = torch.from_numpy(np.load(inputs / "batches" / f"{step}.target.npy"))
        optimizer.param_groups[0]["lr"] = fp8lab.optim.learning_rate(
            s["learning_rate"], s["warmup_steps"], s["final_lr_fraction"], step, info["steps"])
        optimizer.zero_grad()
        loss = model(x, target)
        losses.append(loss.item())
        loss.backward()
        if s["grad_clip"] > 0:
            optimizer.clip_grad_norm(s["grad_clip"])
        optimizer.step()
    return losses


@pytest.fixture
def one_thread():
    """As `fp8lab run` (use_one_torch_thread): torch's reductions keep their bits at 1 thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("name", RECIPES)
def test_python_loss_bits_equal_fp8lab_run(name, tmp_path, one_thread):
    fields = RECIPES[name]
    fp8lab_run("--export-inputs", str(tmp_path / "inputs"))
    settings = [a for k, v in fields.items() for a in ("--set", f"{k}={v}")]
    fp8lab_run(*settings, "--out", str(tmp_path / "run"))
    records = [json.loads(p.read_text()) for p in (tmp_path / "run" / "runs").glob("*.json")]
    (record,) = [r for r in records if r["kind"] == "fp8"]
    expected = [row["loss"] for row in record["train"]]
    assert [row["step"] for row in record["train"]] == list(range(STEPS))

    text = "{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"
    losses = train_in_python(tmp_path / "inputs", text)
    for step, (ours, theirs) in enumerate(zip(losses, expected)):
        assert bits(ours) == bits(theirs), (
            f"{name}: step {step}: Python loss 0x{bits(ours)} ({ours!r}) != fp8lab run's "
            f"0x{bits(theirs)} ({theirs!r})")
    assert len(losses) == len(expected) == STEPS
