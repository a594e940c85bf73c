"""examples/hf_llama.py at its CI size: a transformers LlamaForCausalLM (random init) on the KJV
tokens under the baseline and three recipes, 2 seeds, through fp8lab.sweep; its results read back
by fp8lab.layer_stats and the report."""

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

import fp8lab

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))  # the runs' processes import hf_llama from this sys.path
import hf_llama  # noqa: E402


def test_the_hf_llama_example_at_ci_size(tmp_path):
    if not os.environ.get("FP8LAB_CLI"):
        pytest.skip("FP8LAB_CLI is not set (scripts/test sets it to build/experiments/fp8lab)")
    out = tmp_path / "hf-llama"
    report = hf_llama.run(out, "ci", jobs=2)
    assert report == out / "report.html" and report.is_file()
    runs = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    assert sorted(r["kind"] for r in runs) == ["baseline"] * 2 + ["fp8"] * 6
    model = hf_llama.model_ci(0)
    for r in runs:
        assert r["status"] == "finished", (r["run_id"], r.get("error"))
        assert r["python_model"]["class"] == "LlamaForCausalLM"
        assert r["parameter_count"] == sum(p.numel() for p in model.parameters())
        # A random model's first loss is near ln(4096) = 8.32 nats.
        assert abs(r["train"][0]["loss"] - 8.32) < 0.1, r["train"][0]
    fp8 = [r for r in runs if r["kind"] == "fp8"]
    assert {r["recipe"]["scaling"] for r in fp8} == {"current", "mxfp8", "rowwise"}
    linears = ["model.layers.0.self_attn." + n for n in ("q_proj", "k_proj", "v_proj", "o_proj")]
    linears += ["model.layers.0.mlp." + n for n in ("gate_proj", "up_proj", "down_proj")]
    linears.append("lm_head")
    for r in fp8:
        # torchao's recipes take accelerate's AO filter, which skips the first and last Linear.
        expected = linears[1:-1] if r["recipe"]["scaling"] == "rowwise" else linears
        assert sorted(r["fp8_layers"]) == sorted(expected), (r["recipe_label"], r["fp8_layers"])
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 6 and summary["verdict"].notna().all()
    frame = fp8lab.layer_stats(out)
    assert set(frame["run_id"]) == {r["run_id"] for r in fp8}
    assert len(set(frame["layer"])) == 8  # q, k, v, o, gate, up, down, lm_head
    assert set(frame["step"]) == set(range(hf_llama.SIZES["ci"]["steps"]))
    assert frame["sqnr_db"].between(0, 80).all()
