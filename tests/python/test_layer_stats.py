"""fp8lab.layer_stats: the sidecars of a results directory as one DataFrame, through the
notebooks' reader (fp8lab.results)."""

import os
import pathlib
import subprocess

import pandas as pd
import pytest

import fp8lab

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_layer_stats_of_the_tiny_sweep(tmp_path):
    command = os.environ.get("FP8LAB_CLI")
    if not command:
        pytest.skip("FP8LAB_CLI is not set (scripts/test sets it to build/experiments/fp8lab)")
    out = tmp_path / "tiny"
    run = subprocess.run([command, "sweep", str(ROOT / "tests/notebooks/tiny_sweep.yaml"),
                          "--out", str(out), "--steps", "10"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    frame = fp8lab.layer_stats(out)
    assert list(frame.columns[:2]) == ["run_id", "label"]
    sidecars = sorted((out / "layer_stats").glob("*.parquet"))
    assert sorted(set(frame["run_id"])) == sorted(p.stem for p in sidecars)
    assert len(frame) == sum(len(pd.read_parquet(p)) for p in sidecars)
    # The sweep's what-if recipes in every run, the trained quantization in its FP8 runs.
    assert {"mxfp8", "block", "trained"} <= set(frame["recipe"])
    assert frame["sqnr_db"].dtype == "float64" and frame["step"].dtype == "int64"


def test_layer_stats_refuses_a_directory_without_results(tmp_path):
    with pytest.raises(ValueError, match=r"holds no results.jsonl"):
        fp8lab.layer_stats(tmp_path)
    (tmp_path / "results.jsonl").write_text('{"schema_version": 1}\n')
    with pytest.raises(ValueError, match=r"results.jsonl.*run_id"):
        fp8lab.layer_stats(tmp_path)
