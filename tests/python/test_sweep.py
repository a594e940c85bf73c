"""fp8lab.sweep: a user's MLP (tests/python/sweep_models.py) under a baseline, two recipes and the
null run, two seeds, through the sweep runner of `fp8lab sweep`; its files read back by
`fp8lab report` and fp8lab.layer_stats; a resumed sweep after a killed run equals the
uninterrupted one; bad input raises ValueError with the runner's message."""

import json
import os
import subprocess

import pandas as pd
import pytest

import fp8lab
import sweep_models

SWEEP = {
    "method": "grid",
    "seeds": [0, 1],
    "null_runs": True,
    "layer_stats_every": 2,
    "parameters": {"scaling": {"values": ["current", "mxfp8"]}},
}
STEPS = 5


def command():
    cli = os.environ.get("FP8LAB_CLI")
    if not cli:
        pytest.skip("FP8LAB_CLI is not set (scripts/test sets it to build/experiments/fp8lab)")
    return cli


def run_sweep(out, **kwargs):
    return fp8lab.sweep(SWEEP, sweep_models.model, sweep_models.data, out, jobs=2, steps=STEPS,
                        eval_fn=sweep_models.eval_batches, eval_every=2, **kwargs)


def records(out):
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    command()
    out = tmp_path_factory.mktemp("sweep") / "mlp"
    report = run_sweep(out)
    return out, report


def test_the_sweep_writes_the_runners_files(swept):
    out, report = swept
    assert report == out / "report.html" and report.is_file()
    runs = records(out)
    kinds = sorted(r["kind"] for r in runs.values())
    assert kinds == ["baseline"] * 2 + ["fp8"] * 4 + ["null"] * 2, kinds
    model = sweep_models.model(0)
    for run_id, r in runs.items():
        assert r["status"] == "finished", (run_id, r.get("error"))
        assert r["workload"] == "python"
        # What trained it: the user's model.
        assert r["python_model"]["class"] == "TinyMLP"
        assert r["python_model"]["parameter_count"] == sum(p.numel() for p in model.parameters())
        assert r["python_model"]["model_fn"] == "sweep_models:model"
        assert [row["step"] for row in r["train"]] == list(range(STEPS))
        assert [row["step"] for row in r["eval"]] == [0, 2, 4]
    for r in runs.values():
        if r["kind"] == "fp8":
            assert r["fp8_gemms"] == {"up": ["fprop", "dgrad", "wgrad"],
                                      "down": ["fprop", "dgrad", "wgrad"]}
            # Against its seed's baseline: the same first loss (the same weights and batch before
            # any FP8 update would be a coincidence at the last bits, so only the baseline id and
            # a measured divergence are asserted).
            assert r["baseline_run_id"] == f"baseline-python-seed{r['seed']}-fp32-steps{STEPS}"
            assert r["final"]["weight_rel_l2"] > 0
            assert {row["step"] for row in r["layers"]} == {0, 2, 4}
    # results.jsonl, summary.csv and contrasts.csv, from the runner's writers; the paired verdicts.
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(runs)
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 4 and set(summary["workload"]) == {"python"}
    assert "verdict" in summary.columns and summary["verdict"].notna().all()
    assert (out / "contrasts.csv").is_file() and (out / "report.md").is_file()


def test_fp8lab_report_reads_the_directory_back(swept, tmp_path):
    out, _ = swept
    # A copy, so that the report's rewrite leaves the fixture's files as the sweep wrote them.
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(out), str(copy)], check=True)
    done = subprocess.run([command(), "report", str(copy)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 records" in done.stdout + done.stderr
    assert pd.read_csv(copy / "summary.csv").equals(pd.read_csv(out / "summary.csv"))


def test_layer_stats_reads_the_sidecars(swept):
    out, _ = swept
    frame = fp8lab.layer_stats(out)
    fp8_runs = sorted(k for k, r in records(out).items() if r["kind"] == "fp8")
    assert sorted(set(frame["run_id"])) == fp8_runs
    assert set(frame["layer"]) == {"up", "down"} and set(frame["recipe"]) == {"trained"}
    # layer_stats_every 2 over 5 steps: steps 0, 2 and the last.
    assert set(frame["step"]) == {0, 2, 4}
    # Per step: six copies of `down` (input, weight, grad_output, each for two GEMMs) and five of
    # `up`, whose input needs no gradient (no dgrad, so grad_output has no dgrad copy); each copy
    # one quantize call.
    assert len(frame) == len(fp8_runs) * 3 * (6 + 5)
    up = frame[frame["layer"] == "up"]
    assert not ((up["tensor"] == "grad_output") & (up["gemm"] == "dgrad")).any()
    assert (frame["quantizations"] == 1).all()
    assert frame["sqnr_db"].between(10, 80).all(), frame["sqnr_db"].describe()


def test_a_resumed_sweep_equals_the_uninterrupted_one(swept, tmp_path, monkeypatch):
    out, _ = swept
    resumed = tmp_path / "resumed"
    # The runner's fault hook: the 3rd run process is killed (SIGKILL) as the OOM killer would.
    monkeypatch.setenv("FP8LAB_FAULT_KILL_CHILD", "3")
    with pytest.raises(RuntimeError, match="ended with status 3"):
        run_sweep(resumed)
    monkeypatch.delenv("FP8LAB_FAULT_KILL_CHILD")
    assert len(records(resumed)) < len(records(out))
    run_sweep(resumed, resume=True)
    a, b = records(out), records(resumed)
    assert sorted(a) == sorted(b)
    for run_id in a:
        for key in ("train", "eval", "layers", "final"):
            assert a[run_id][key] == b[run_id][key], (run_id, key)
    for sidecar in (out / "layer_stats").glob("*.parquet"):
        assert pd.read_parquet(sidecar).equals(
            pd.read_parquet(resumed / "layer_stats" / sidecar.name)), sidecar.name


def test_a_directory_of_another_model_is_refused(swept, tmp_path):
    out, _ = swept
    with pytest.raises(ValueError, match="another sweep configuration"):
        fp8lab.sweep(SWEEP, sweep_models.model, sweep_models.data, out, steps=STEPS,
                     eval_fn=sweep_models.eval_batches, eval_every=3, resume=True)


@pytest.mark.parametrize("sweep, message", [
    ({"parameters": {"scaling": {"values": ["bogus"]}}},
     r"python-sweep-[0-9a-f]+.yaml:\d+: parameters.scaling.values\[0\]: unknown value 'bogus'; accepted: "),
    ({"workloads": ["mlp"]}, r"workloads: 'mlp' under fp8lab.sweep.*accepted: python"),
    ({"seeds": "x"}, r"seeds: expected a list or auto, got 'x'"),
])
def test_bad_sweep_raises_the_runners_message(sweep, message, tmp_path):
    command()
    with pytest.raises(ValueError, match=message):
        fp8lab.sweep(sweep, sweep_models.model, sweep_models.data, tmp_path / "bad", steps=2)
    assert not (tmp_path / "bad" / "runs").exists()


def test_functions_a_run_cannot_import_are_refused(tmp_path):
    command()
    with pytest.raises(ValueError, match="model_fn '.*<lambda>'.*accepted: a function at the top"):
        fp8lab.sweep(SWEEP, lambda seed: None, sweep_models.data, tmp_path, steps=2)
    with pytest.raises(ValueError, match="steps=0; accepted: an integer >= 1"):
        fp8lab.sweep(SWEEP, sweep_models.model, sweep_models.data, tmp_path, steps=0)
