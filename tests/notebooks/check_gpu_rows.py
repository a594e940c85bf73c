"""gpu_vs_reference.ipynb on a check.json that has kernel rows, as `fp8lab check --json` writes them
on a machine with a GPU. Where the tests run without one, the real check.json records only why
nothing was checked; this test feeds the notebook a test fixture in the same schema (kernel names
start with "fixture:", it is never written into a results directory) so that its mismatch table and
ULP histogram run here too, and checks what they print and draw.

    check_gpu_rows.py NOTEBOOKS_DIR RESULTS_DIR
"""
import json
import os
import sys
import tempfile
from pathlib import Path

from execute_notebooks import execute_notebook


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


FIXTURE = {
    "schema": "fp8lab.check", "schema_version": 1, "status": "failed", "reason": "",
    "device": {"name": "fixture device", "compute_capability": 90, "driver_version": "0",
               "runtime_version": "0"},
    "kernels": [kernel("fixture: exact kernel", {}),
                kernel("fixture: kernel off by 1 ulp and a NaN", {1: 2, 32: 1}),
                kernel("fixture: peer", {1: 5, 3: 2}, peer=True)],
}

EXPECTED_TEXT = ("3 kernels: 1 deterministic kernel(s) with mismatches, 1 peer(s) that differ",
                 "sim 0x3F800000 (1), gpu 0x3F800001")


def main():
    notebooks, results = Path(sys.argv[1]), Path(sys.argv[2])
    path = notebooks / "gpu_vs_reference.ipynb"
    with tempfile.TemporaryDirectory() as temp:
        check = Path(temp) / "check.json"
        check.write_text(json.dumps(FIXTURE), encoding="utf-8")
        os.environ["FP8LAB_RESULTS_DIR"] = str(results.resolve())
        os.environ["FP8LAB_CHECK_JSON"] = str(check)
        notebook, error = execute_notebook(path)
        if error is not None:
            sys.exit(f"FAIL {path.name} on the fixture:\n{error}")
    text = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code"
                   for o in c.outputs)
    images = sum("image/png" in o.get("data", {}) for c in notebook.cells if c.cell_type == "code"
                 for o in c.outputs)
    failures = [f"output lacks {needle!r}" for needle in EXPECTED_TEXT if needle not in text]
    if images != 1:
        failures.append(f"{images} images drawn; expected 1 (the ULP histogram)")
    for failure in failures:
        print(f"FAIL {path.name}: {failure}")
    if not failures:
        print(f"ok   {path.name} on a check.json with rows: table, first mismatches, ULP histogram")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
