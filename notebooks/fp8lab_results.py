"""Reading an fp8lab results directory for the notebooks in this folder.

The files come from `fp8lab sweep` / `fp8lab run` / `fp8lab report` (results.jsonl, summary.csv;
schema in docs/results-schema.md, written by experiments/run/run_executor.cpp and
experiments/render/summary_csv.cpp) and from `fp8lab check --json FILE` (schema "fp8lab.check",
experiments/cli/check_command.cpp). Every field a notebook reads is checked here when the file is
loaded: a schema version these notebooks do not know, or a missing field or column, raises
ResultsSchemaError naming the file, the line and the field, instead of a KeyError deep in a plot.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

RESULTS_SCHEMA_VERSIONS = (1,)
CHECK_SCHEMA_VERSIONS = (1,)

# The report's unpaired labels (summary.csv run_verdict), best first (experiments/stats/
# analysis.hpp), and the tolerance of "within tolerance" when the noise floor is unmeasured (fewer
# than 3 baseline seeds). "within tolerance" and "beyond tolerance" compare one seed with a
# threshold: descriptions, not tests (the paired verdicts are). Each run's own tolerance (the noise
# floor of its baseline's seeds, or this) is summary.csv's tracks_tolerance column:
# tracks_tolerance() reads it.
VERDICT_ORDER = ("within tolerance", "beyond tolerance", "failed to train", "unstable", "diverged",
                 "error", "not run")
TRACKS_BASELINE_TOLERANCE = 0.02

# Fields every record has, then those of a record that trained (status finished or diverged), of
# such an FP8 run, and of a finished FP8 run's "final" (the last eval step against the baseline's).
RECORD_FIELDS = ("schema_version", "run_id", "kind", "status", "workload", "seed", "backend",
                 "high_precision")
TRAINED_FIELDS = ("steps_planned", "steps_completed", "diverged_at_step", "train", "eval", "final",
                  "throughput", "layers")
FP8_FIELDS = ("recipe", "recipe_fields", "recipe_label", "baseline_run_id")
# A null run (experiments/run/null_run.hpp) is compared like an FP8 run but has no recipe.
NULL_FIELDS = ("recipe_label", "baseline_run_id", "perturbation")
FINAL_FIELDS = ("train_loss",)
FP8_FINAL_FIELDS = ("eval_loss", "baseline_eval_loss", "eval_rel_diff", "weight_rel_l2",
                    "grad_rel_l2")
# Added to 'final' within version 1 (docs/results-schema.md: fields are only added within a
# version), so older version-1 records may lack them: the notebooks show what is there.
FP8_FINAL_HEALTH_FIELDS = ("forward_sqnr_db", "gradient_sqnr_db", "input_underflow_fraction",
                           "weight_underflow_fraction", "grad_output_underflow_fraction")
THROUGHPUT_FIELDS = ("step_seconds", "steps_per_second", "tokens_per_second", "gemm_time_share")
TRAIN_ROW_FIELDS = ("step", "loss")
FP8_TRAIN_ROW_FIELDS = ("baseline_loss", "rel_diff")
EVAL_ROW_FIELDS = ("step", "loss")
LAYER_ROW_FIELDS = ("step", "layer", "tensor", "gemm", "amax", "scale_min", "scale_max", "count",
                    "saturated", "underflowed", "nan", "sqnr_db")
# The per-layer statistics sidecar (docs/results-schema.md, "Layer statistics sidecar"): a Parquet
# file per run, layer_stats/<run_id>.parquet, named by the record's 'layer_stats_sidecar'.
LAYER_STATS_COLUMNS = {"step": "int64", "quantizations": "int64", "count": "int64",
                       "underflowed": "int64", "saturated": "int64", "nan": "int64",
                       "layer": "str", "tensor": "str", "gemm": "str", "copy": "str",
                       "recipe": "str", "underflow_pct": "float64", "overflow_pct": "float64",
                       "sqnr_db": "float64", "mse": "float64", "amax": "float64",
                       "scale_inv_min": "float64", "scale_inv_max": "float64",
                       "max_block_dynamic_range_log2": "float64", "kurtosis": "float64"}
TRAINED_RECIPE = "trained"  # the recipe column of a run's own quantization
# The recipe column of AdamW's stored moments (tensor exp_avg / exp_avg_sq, gemm "optimizer").
OPTIMIZER_STATES_RECIPE = "optimizer_states"
# 'shadow_check' of runs on the cuda backend with --shadow-every N (experiments/linear/shadow_check.hpp).
SHADOW_FIELDS = ("every", "operations", "compared", "mismatches", "by_key", "first")
SHADOW_KEY_FIELDS = ("layer", "tensor", "kind", "mismatches")

SUMMARY_COLUMNS = ("request_index", "request_label", "run_id", "workload", "seed", "status",
                   "run_verdict", "final_eval_loss", "baseline_eval_loss", "eval_rel_diff",
                   "weight_rel_l2", "grad_rel_l2", "diverged_at_step", "steps_per_second",
                   "tokens_per_second", "gemm_time_share", "step_time_over_baseline",
                   "step_time_over_fp32", "high_precision")

CHECK_FIELDS = ("schema", "schema_version", "status", "reason", "device", "kernels")
CHECK_KERNEL_FIELDS = ("kernel", "cases", "values", "mismatches", "max_ulp", "mean_ulp", "peer",
                       "passed", "ulp_bit_width_counts")


class ResultsSchemaError(Exception):
    """A results file that does not have what the notebooks read: names the file and the field."""

    def __init__(self, path, line, message):
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")
        self.path = Path(path)
        self.line = line


def results_directory(path) -> Path:
    """The results directory as a Path; a clear error when it is not one."""
    directory = Path(path).expanduser().resolve()
    if not (directory / "results.jsonl").is_file():
        hint = ("run `fp8lab report DIR` on it first" if (directory / "runs").is_dir() else
                "point FP8LAB_RESULTS_DIR (or results_dir) at the output directory of an fp8lab "
                "sweep or run; the default is made by `scripts/test -L notebooks`")
        raise FileNotFoundError(f"{directory} holds no results.jsonl: {hint}")
    return directory


def _require(mapping, fields, path, line, where):
    for field in fields:
        if field not in mapping:
            raise ResultsSchemaError(path, line, f"{where} has no field '{field}'")


def _check_record(record, path, line):
    if not isinstance(record, dict):
        raise ResultsSchemaError(path, line, "a record must be a JSON object")
    _require(record, RECORD_FIELDS, path, line, "record")
    version = record["schema_version"]
    if version not in RESULTS_SCHEMA_VERSIONS:
        raise ResultsSchemaError(path, line, f"schema_version {version!r} is not one these "
                                 f"notebooks read {RESULTS_SCHEMA_VERSIONS}: update "
                                 "notebooks/fp8lab_results.py with docs/results-schema.md")
    run = f"run {record['run_id']}"
    if "shadow_check" in record:
        _require(record["shadow_check"], SHADOW_FIELDS, path, line, f"{run}: 'shadow_check'")
        for i, row in enumerate(record["shadow_check"]["by_key"]):
            _require(row, SHADOW_KEY_FIELDS, path, line, f"{run}: 'shadow_check.by_key' row {i}")
    if record["status"] not in ("finished", "diverged"):
        return  # a failed run has its error and nothing else to plot
    fp8 = record["kind"] != "baseline"  # compared with a baseline: an FP8 run or a null run
    identity = FP8_FIELDS if record["kind"] == "fp8" else NULL_FIELDS if fp8 else ()
    _require(record, TRAINED_FIELDS + identity, path, line, run)
    _require(record["final"], FINAL_FIELDS, path, line, f"{run}: 'final'")
    if fp8 and record["status"] == "finished":
        _require(record["final"], FP8_FINAL_FIELDS, path, line, f"{run}: 'final'")
    _require(record["throughput"], THROUGHPUT_FIELDS, path, line, f"{run}: 'throughput'")
    for key, fields in (("train", TRAIN_ROW_FIELDS + (FP8_TRAIN_ROW_FIELDS if fp8 else ())),
                        ("eval", EVAL_ROW_FIELDS), ("layers", LAYER_ROW_FIELDS)):
        for i, row in enumerate(record[key]):
            _require(row, fields, path, line, f"{run}: '{key}' row {i}")


def load_records(directory) -> list[dict]:
    """Every record of DIR/results.jsonl, checked (see the module's docstring)."""
    path = Path(directory) / "results.jsonl"
    records = []
    with open(path, encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise ResultsSchemaError(path, number, f"not valid JSON: {error}") from None
            _check_record(record, path, number)
            records.append(record)
    if not records:
        raise ResultsSchemaError(path, 0, "holds no records")
    return records


def load_summary(directory) -> pd.DataFrame:
    """DIR/summary.csv (one row per requested combination), its columns checked."""
    path = Path(directory) / "summary.csv"
    summary = pd.read_csv(path)
    for column in SUMMARY_COLUMNS:
        if column not in summary.columns:
            raise ResultsSchemaError(path, 1, f"no column '{column}' (it has: "
                                     f"{', '.join(summary.columns)})")
    empty = summary.index[summary["run_verdict"].isna()]
    if len(empty):
        raise ResultsSchemaError(path, int(empty[0]) + 2, "row without a run_verdict")
    unknown = set(summary["run_verdict"]) - set(VERDICT_ORDER)
    if unknown:
        raise ResultsSchemaError(path, 0, f"verdicts {sorted(unknown)} are not among "
                                 f"{VERDICT_ORDER}")
    return summary


def tracks_tolerance(summary: pd.DataFrame, workload=None) -> float:
    """The |final eval rel diff| under which the report labels a run "within tolerance":
    summary.csv's tracks_tolerance (the seed-to-seed noise floor of the baseline, or the fixed
    fallback), of one workload or the largest over all; TRACKS_BASELINE_TOLERANCE for a
    summary.csv from before the column (the report then used the fixed tolerance)."""
    if "tracks_tolerance" not in summary.columns:
        return TRACKS_BASELINE_TOLERANCE
    rows = summary if workload is None else summary[summary["workload"] == workload]
    values = rows["tracks_tolerance"].dropna()
    return float(values.max()) if len(values) else TRACKS_BASELINE_TOLERANCE


def tolerance_source(summary: pd.DataFrame) -> str:
    """What the report's verdicts compared with, in its words (summary.csv tolerance_source)."""
    if "tolerance_source" not in summary.columns:
        return (f"fixed {TRACKS_BASELINE_TOLERANCE:.0%} tolerance (a summary.csv from before "
                "the noise floor)")
    return "; ".join(sorted(set(summary["tolerance_source"].dropna())))


def rank_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """Requested combinations best first, as the report ranks them: verdict class, then the
    final |relative eval-loss difference| against the baseline."""
    ranked = summary.assign(
        verdict_rank=summary["run_verdict"].map(VERDICT_ORDER.index),
        abs_eval_rel_diff=summary["eval_rel_diff"].abs())
    return ranked.sort_values(["verdict_rank", "abs_eval_rel_diff", "run_id"],
                              na_position="last").reset_index(drop=True)


def run_label(record) -> str:
    return record.get("recipe_label") or record["run_id"]


def _number(value):
    """JSON null (how fp8lab writes NaN and Inf) as NaN."""
    return math.nan if value is None else value


def runs_frame(records) -> pd.DataFrame:
    """One row per record: identity, status, final figures, throughput and recipe fields
    (as columns 'recipe.<field>')."""
    rows = []
    for r in records:
        row = {key: r[key] for key in RECORD_FIELDS if key != "schema_version"}
        row["label"] = "baseline" if r["kind"] == "baseline" else run_label(r)
        row["baseline_run_id"] = r.get("baseline_run_id")
        row["steps_completed"] = r.get("steps_completed")
        row["diverged_at_step"] = r.get("diverged_at_step")
        for key, value in r.get("final", {}).items():
            row[key] = _number(value)
        for key, value in r.get("throughput", {}).items():
            row[key] = _number(value)
        for key, value in r.get("recipe", {}).items():
            row[f"recipe.{key}"] = value
        rows.append(row)
    return pd.DataFrame(rows)


def curves(records, which: str) -> pd.DataFrame:
    """Long table of the 'train' or 'eval' rows of every run that trained, with run_id and
    label; null losses (NaN/Inf) as NaN."""
    rows = []
    for r in records:
        for row in r.get(which, []):
            rows.append({"run_id": r["run_id"], "kind": r["kind"],
                         "label": "baseline" if r["kind"] == "baseline" else run_label(r),
                         **{k: _number(v) for k, v in row.items()}})
    return pd.DataFrame(rows)


def layer_statistics(records) -> pd.DataFrame:
    """Long table of the per-layer, per-operand statistics rows (the steps that logged them),
    with the fractions of saturated, underflowed and NaN values."""
    rows = []
    for r in records:
        for row in r.get("layers", []):
            rows.append({"run_id": r["run_id"], "label": run_label(r),
                         **{k: _number(v) for k, v in row.items()}})
    frame = pd.DataFrame(rows, columns=["run_id", "label", *LAYER_ROW_FIELDS])
    for count in ("saturated", "underflowed", "nan"):
        frame[f"{count}_fraction"] = frame[count] / frame["count"]
    return frame


def layer_stats_path(directory, record):
    """The sidecar of a record (None when it kept none or predates sidecars)."""
    relative = record.get("layer_stats_sidecar")
    return None if relative is None else Path(directory) / relative


def load_layer_stats(directory, record) -> pd.DataFrame:
    """A run's sidecar as a long frame (one row per step, layer, tensor, GEMM copy and recipe),
    its columns and their types checked; run_id and label added."""
    path = layer_stats_path(directory, record)
    if path is None:
        raise ResultsSchemaError(Path(directory) / "results.jsonl", 0,
                                 f"run {record['run_id']} has no 'layer_stats_sidecar'")
    if not path.is_file():
        raise ResultsSchemaError(path, 0, f"run {record['run_id']}'s sidecar is missing")
    frame = pd.read_parquet(path)
    for column, kind in LAYER_STATS_COLUMNS.items():
        if column not in frame.columns:
            raise ResultsSchemaError(path, 0, f"no column '{column}'")
        ok = (pd.api.types.is_string_dtype(frame[column]) or frame[column].dtype == object
              if kind == "str" else str(frame[column].dtype) == kind)
        if not ok:
            raise ResultsSchemaError(path, 0,
                                     f"column '{column}' is {frame[column].dtype}, expected {kind}")
    frame.insert(0, "run_id", record["run_id"])
    frame.insert(1, "label", "baseline" if record["kind"] == "baseline" else run_label(record))
    return frame


def layer_step_pivot(frame: pd.DataFrame, recipe: str, statistic: str) -> pd.DataFrame:
    """layers x steps of one recipe's rows: underflow_pct pooled over the layer's copies
    (sum underflowed / sum count), any other statistic as its worst copy (sqnr_db: the lowest,
    others: the highest), as the report's heatmaps."""
    rows = frame[frame["recipe"] == recipe]
    if statistic == "underflow_pct":
        sums = rows.groupby(["layer", "step"])[["underflowed", "count"]].sum()
        cells = 100.0 * sums["underflowed"] / sums["count"]
    else:
        grouped = rows.groupby(["layer", "step"])[statistic]
        cells = grouped.min() if statistic == "sqnr_db" else grouped.max()
    return cells.unstack("step")


def varied_recipe_axes(records) -> list[str]:
    """Recipe fields whose values differ between the FP8 runs, most distinct values first (ties in
    the recipe's field order): the report's default heatmap axes."""
    order, values = [], {}
    for r in records:
        if r["kind"] == "baseline" or "recipe" not in r:
            continue
        for name in list(r.get("recipe_fields", [])) + list(r["recipe"]):
            if name not in values:
                order.append(name)
                values[name] = set()
            values[name].add(str(r["recipe"].get(name, "")))
    varied = [name for name in order if len(values[name]) > 1]
    return sorted(varied, key=lambda name: -len(values[name]))


def load_check(path):
    """The JSON of `fp8lab check --json FILE`, checked, or None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        check = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ResultsSchemaError(path, 0, f"not valid JSON: {error}") from None
    _require(check, CHECK_FIELDS, path, 0, "check output")
    if check["schema"] != "fp8lab.check" or check["schema_version"] not in CHECK_SCHEMA_VERSIONS:
        raise ResultsSchemaError(path, 0, f"schema {check['schema']!r} version "
                                 f"{check['schema_version']!r} is not fp8lab.check "
                                 f"{CHECK_SCHEMA_VERSIONS}")
    for i, kernel in enumerate(check["kernels"]):
        _require(kernel, CHECK_KERNEL_FIELDS, path, 0, f"kernel row {i}")
    return check


def check_kernels_frame(check) -> pd.DataFrame:
    """One row per checked kernel of `fp8lab check`, with its verdict as the command prints it."""
    frame = pd.DataFrame(check["kernels"], columns=list(CHECK_KERNEL_FIELDS))
    frame["status"] = ["peer" if peer else ("ok" if passed else "FAIL")
                       for peer, passed in zip(frame["peer"], frame["passed"])]
    return frame


def ulp_histogram(check) -> pd.DataFrame:
    """Mismatches per kernel (rows) by ULP distance bucket (columns '0', '1', '2-3', ...), for
    the kernels that have any."""
    def bucket(width):
        if width <= 1:
            return str(width)
        if width <= 4:
            return f"{2 ** (width - 1)}..{2 ** width - 1}"
        return f"2^{width - 1}..2^{width}-1"
    rows = {k["kernel"]: k["ulp_bit_width_counts"] for k in check["kernels"] if k["mismatches"]}
    frame = pd.DataFrame.from_dict(rows, orient="index",
                                   columns=[bucket(w) for w in range(33)])
    return frame.loc[:, (frame != 0).any(axis=0)]


def shadow_checks(records) -> pd.DataFrame:
    """One row per run whose record carries a 'shadow_check' (the cuda backend's steps replayed
    through sim/): how often, how many calls and values were compared, how many differed."""
    rows = [{"run_id": r["run_id"], "label": run_label(r), "backend": r["backend"],
             **{k: r["shadow_check"][k] for k in ("every", "operations", "compared", "mismatches")}}
            for r in records if "shadow_check" in r]
    return pd.DataFrame(rows, columns=["run_id", "label", "backend", "every", "operations",
                                       "compared", "mismatches"])


def shadow_mismatches(records) -> pd.DataFrame:
    """The shadow checks' mismatches by run, layer, tensor and kind (code, scale, history, ...)."""
    rows = [{"run_id": r["run_id"], **row} for r in records if "shadow_check" in r
            for row in r["shadow_check"]["by_key"]]
    return pd.DataFrame(rows, columns=["run_id", *SHADOW_KEY_FIELDS])
