"""gpu_vs_reference.ipynb on GPU results: a check.json with kernel rows, as `fp8lab check --json`
writes them on a machine with a GPU, and a run record with a `shadow_check`, as runs with
`--backend cuda --shadow-every N` write it. Where the tests run without a GPU neither exists (the real
check.json records only why nothing was checked), so this test feeds the notebook a fixture in those
schemas (kernel names and texts start with "fixture", written to a temp directory, never into a
results directory) and checks that its mismatch table, ULP histogram and shadow-check breakdown run
and show the fixture's counts.

    check_gpu_rows.py NOTEBOOKS_DIR RESULTS_DIR
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from execute_notebooks import count_images, execute_notebook


def kernel(name, mismatches_by_width, peer=False):
    counts = [0] * 33
    for width, n in mismatches_by_width.items():
        counts[width] = n
    mismatches = sum(counts)
    return {"kernel": name, "cases": 4, "values": 1000, "nonzero": 900, "mismatches": mismatches,
            "max_ulp": max((2 ** w - 1 for w, n in mismatches_by_width.items() if n), default=0),
            "mean_ulp": 0.0, "peer": peer, "passed": peer or mismatches == 0,
            "ulp_bit_width_counts": counts,
            "first_mismatches": [f"{name}: index 0: sim 0x3F800000 (1), gpu 0x3F800001 (1.00000012)"]
                                if mismatches else []}


CHECK = {
    "schema": "fp8lab.check", "schema_version": 1, "status": "failed", "reason": "",
    "device": {"name": "fixture device", "compute_capability": 90, "driver_version": "0",
               "runtime_version": "0"},
    "kernels": [kernel("fixture: exact kernel", {}),
                kernel("fixture: kernel off by 1 ulp and a NaN", {1: 2, 32: 1}),
                kernel("fixture: peer", {1: 5, 3: 2}, peer=True)],
}

SHADOW = {"every": 2, "operations": 40, "compared": 123456, "mismatches": 3,
          "by_key": [{"layer": "linear#0", "tensor": "input/fprop", "kind": "code", "mismatches": 2},
                     {"layer": "linear#1", "tensor": "fprop", "kind": "output", "mismatches": 1},
                     {"layer": "linear#2", "tensor": "forward", "kind": "history", "mismatches": 0}],
          "first": ["fixture shadow mismatch: linear#0 input/fprop code 17: sim 0x3c, cuda 0x3d"]}

EXPECTED_TEXT = ("3 kernels: 1 deterministic kernel(s) with mismatches, 1 peer(s) that differ",
                 "sim 0x3F800000 (1), gpu 0x3F800001",
                 "1 run(s) shadow-checked: 40 calls replayed, 123456 values compared, 3 mismatches.",
                 "fixture shadow mismatch: linear#0 input/fprop code 17")
EXPECTED_IMAGES = 2  # the ULP histogram and the shadow mismatches by kind


def with_shadow_record(results, into):
    """results.jsonl and summary.csv of `results` in `into`, the first FP8 run made a cuda run
    with the SHADOW fixture."""
    into.mkdir()
    shutil.copy(results / "summary.csv", into / "summary.csv")
    lines = (results / "results.jsonl").read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(lines):
        record = json.loads(text)
        if record["kind"] == "fp8":
            record.update(backend="cuda", shadow_check=SHADOW)
            lines[number] = json.dumps(record)
            break
    else:
        sys.exit(f"{results / 'results.jsonl'} holds no FP8 run")
    (into / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main():
    notebooks, results = Path(sys.argv[1]), Path(sys.argv[2])
    path = notebooks / "gpu_vs_reference.ipynb"
    with tempfile.TemporaryDirectory() as temp:
        temp = Path(temp)
        with_shadow_record(results, temp / "results")
        (temp / "check.json").write_text(json.dumps(CHECK), encoding="utf-8")
        os.environ["FP8LAB_RESULTS_DIR"] = str(temp / "results")
        os.environ["FP8LAB_CHECK_JSON"] = str(temp / "check.json")
        notebook, error = execute_notebook(path)
        if error is not None:
            sys.exit(f"FAIL {path.name} on the fixture:\n{error}")
    text = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code"
                   for o in c.outputs)
    failures = [f"output lacks {needle!r}" for needle in EXPECTED_TEXT if needle not in text]
    images = count_images(notebook)
    if images != EXPECTED_IMAGES:
        failures.append(f"{images} figures drawn; expected {EXPECTED_IMAGES}")
    for failure in failures:
        print(f"FAIL {path.name}: {failure}")
    if not failures:
        print(f"ok   {path.name} on GPU-shaped fixtures: kernel table, first mismatches, ULP "
              "histogram, shadow-check totals, breakdown and first mismatches")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
