"""The per-layer statistics sidecars of the tiny sweep through pandas (the CTest test
notebooks_layer_stats):

1. every run names its sidecar, and pandas reads it (fp8lab_results.load_layer_stats checks the
   columns and their types);
2. its rows of the run's own quantization hold the figures of the record's 'layers' rows at the
   steps both logged (the same OperandStats written by the C++ writer and by the JSON record);
3. the what-if recipes of sweep.json appear in every FP8 run and baseline;
4. a sidecar written back by pandas reads back equal (the round trip);
5. a sidecar without a column is refused, naming the file and the column.

    check_layer_stats.py NOTEBOOKS_DIR RESULTS_DIR
"""
import json
import math
import sys
import tempfile
from pathlib import Path

import pandas as pd


def main():
    notebooks, results = Path(sys.argv[1]), Path(sys.argv[2])
    sys.path.insert(0, str(notebooks))
    import fp8lab_results as fr

    records = fr.load_records(results)
    sweep = json.loads((results / "sweep.json").read_text())
    what_if = set(sweep["what_if"])
    assert what_if, "the tiny sweep names what-if recipes"
    checked_rows = 0
    for record in records:
        if record["kind"] not in ("fp8", "baseline") or record["status"] == "failed":
            continue
        frame = fr.load_layer_stats(results, record)
        recipes = set(frame["recipe"])
        assert what_if <= recipes, f"{record['run_id']}: what-if recipes {what_if - recipes} missing"
        if record["kind"] == "baseline":
            assert fr.TRAINED_RECIPE not in recipes, "a baseline quantizes nothing of its own"
            continue
        own = frame[frame["recipe"] == fr.TRAINED_RECIPE].set_index(
            ["step", "layer", "tensor", "gemm"])
        for row in record["layers"]:
            key = (row["step"], row["layer"], row["tensor"], row["gemm"])
            if key not in own.index:
                continue  # a step only the record logged
            side = own.loc[key]
            for count in ("count", "underflowed", "saturated", "nan"):
                assert side[count] == row[count], (record["run_id"], key, count)
            for figure in ("amax", "sqnr_db"):  # JSON null: NaN or +-Inf in the sidecar
                value = row[figure]
                assert (not math.isfinite(side[figure]) if value is None
                        else side[figure] == value), (record["run_id"], key, figure)
            assert side["underflow_pct"] == 100 * row["underflowed"] / row["count"]
            checked_rows += 1

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "copy.parquet"
            original = pd.read_parquet(fr.layer_stats_path(results, record))
            original.to_parquet(path)
            pd.testing.assert_frame_equal(pd.read_parquet(path), original)
            original.drop(columns=["kurtosis"]).to_parquet(path)
            broken = dict(record, layer_stats_sidecar=str(path))
            try:
                fr.load_layer_stats(results, broken)
            except fr.ResultsSchemaError as error:
                assert "copy.parquet" in str(error) and "'kurtosis'" in str(error), error
            else:
                raise AssertionError("a sidecar without 'kurtosis' was accepted")
    assert checked_rows > 0, "no step was logged by both the record and the sidecar"
    print(f"ok: {checked_rows} record rows found in the sidecars; round trip and errors checked")


if __name__ == "__main__":
    main()
