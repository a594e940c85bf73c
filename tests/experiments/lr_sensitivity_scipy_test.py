"""The learning-rate analysis (issue 31 §7) recomputed from hand-made records with numpy/scipy.

Writes run records of a workload `w` at five learning rates spaced x sqrt(10) (baselines and two
recipes on four seeds, with unstable, diverged and failed runs placed so that every rule of
experiments/stats/lr_sensitivity.hpp is exercised, and a null run that must be ignored), runs
`fp8lab report` on them, and recomputes every row of lr_sensitivity.csv with an implementation of
its own: the capped losses (Wortsman's min(loss, initial loss); an unstable or diverged run counts
as its initial loss), their t-intervals (scipy.stats.t), the unstable counts' Clopper-Pearson
intervals (scipy.stats.beta), the per-seed stability edges and their shift against the baseline
with its named test (report_statistics_scipy_test.named_test, band one grid step), and Wortsman's
LR sensitivity with its paired difference. Agreement to 1e-6 relative is the check. Also checks
that report.html draws the loss-against-lr chart and report.md the two tables.

Usage: lr_sensitivity_scipy_test.py --fp8lab BUILD/experiments/fp8lab --out DIR
"""
import argparse
import csv
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_statistics_scipy_test import close, named_test  # noqa: E402

LRS = [1e-3 * math.sqrt(10) ** k for k in range(5)]
SEEDS = [0, 1, 2, 3]
# The first lr index whose run is unstable, per seed (None: stable everywhere).
FIRST_UNSTABLE = {"baseline": [4, 4, None, 3], "scaling=mxfp8": [3, 2, 3, 3],
                  "scaling=block": [4, 3, None, 3]}
LABELS = {"scaling=mxfp8": "mxfp8 HYBRID", "scaling=block": "block HYBRID"}
OFFSET = {"baseline": 0.0, "scaling=mxfp8": 0.05, "scaling=block": 0.02}
FAILED = {("scaling=block", 3, 1)}      # (arm, seed, lr index): an exception, no result
DIVERGED = {("baseline", 1, 4)}         # a non-finite loss: the rule's first clause


def spec(lr):
    return f"w:lr={lr:.17g}"


def baseline_id(lr, seed):
    return f"baseline-w.lr-{lr:.17g}-seed{seed}-fp32"


def make_records(rng):
    records = []
    for arm in ["baseline", "scaling=mxfp8", "scaling=block"]:
        for seed in SEEDS:
            initial = 8.0 + 0.01 * seed
            for i, lr in enumerate(LRS):
                loss = 4.0 + 0.5 * (math.log10(lr) + 2.2) ** 2 + OFFSET[arm] + rng.normal(0, 0.03)
                first = FIRST_UNSTABLE[arm][seed]
                status = "finished"
                if first is not None and i >= first:
                    status = "unstable"
                if (arm, seed, i) in DIVERGED:
                    status = "diverged"
                if (arm, seed, i) in FAILED:
                    status = "failed"
                final = {"eval_loss": None if status == "diverged" else
                         (loss + 9.0 if status == "unstable" else loss),
                         "initial_eval_loss": initial}
                record = {"schema": "fp8lab.run", "schema_version": 1, "status": status,
                          "workload": spec(lr), "workload_options": {"lr": lr}, "seed": seed,
                          "high_precision": "fp32", "backend": "sim", "steps_planned": 10,
                          "eval": [{"step": 0, "loss": initial}, {"step": 10, "loss": final["eval_loss"]}],
                          "final": final}
                if arm == "baseline":
                    record.update({"run_id": baseline_id(lr, seed), "kind": "baseline"})
                else:
                    record.update({"run_id": f"{arm[8:]}-{i}-{seed}", "kind": "fp8",
                                   "baseline_run_id": baseline_id(lr, seed),
                                   "recipe_canonical": arm, "recipe_label": LABELS[arm],
                                   "recipe": {"scaling": arm[8:]}, "recipe_fields": ["scaling"]})
                if status == "failed":
                    record.pop("steps_planned")
                    record["error"] = "a test's exception"
                    record["eval"] = []
                    record["final"] = {}
                records.append(record)
    records.append({"schema": "fp8lab.run", "schema_version": 1, "run_id": "null-" + baseline_id(LRS[0], 0),
                    "kind": "null", "status": "finished", "workload": spec(LRS[0]), "seed": 0,
                    "baseline_run_id": baseline_id(LRS[0], 0), "null_arm": "once",
                    "eval": [{"step": 0, "loss": 8.0}, {"step": 10, "loss": 1.0}],
                    "final": {"eval_loss": 1.0, "initial_eval_loss": 8.0}})
    return records


def capped(record):
    if record["status"] == "failed":
        return None
    initial = record["eval"][0]["loss"]
    final = record["final"].get("eval_loss")
    if record["status"] in ("unstable", "diverged") or final is None or not math.isfinite(final):
        return initial
    return min(final, initial)


def interval(values):
    values = np.asarray(values, dtype=float)
    n = len(values)
    mean = float(values.mean())
    half = float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def clopper_pearson(k, n):
    low = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return low, high


def expected_rows(records):
    step = float(np.median(np.diff(np.log10(LRS))))
    by_arm = {}
    for r in records:
        if r["kind"] == "null":
            continue
        arm = "baseline" if r["kind"] == "baseline" else r["recipe_canonical"]
        by_arm.setdefault(arm, {})[(r["seed"], LRS.index(r["workload_options"]["lr"]))] = r
    per_seed = {}
    for arm, runs in by_arm.items():
        edges, sens = {}, {}
        for seed in SEEDS:
            if any(capped(runs[(seed, i)]) is None for i in range(len(LRS))):
                continue
            losses = [capped(runs[(seed, i)]) for i in range(len(LRS))]
            sens[seed] = float(np.mean(losses) - np.min(losses))
            unstable = [runs[(seed, i)]["status"] in ("unstable", "diverged") for i in range(len(LRS))]
            first = unstable.index(True) if any(unstable) else None
            if first is None:
                edges[seed] = (math.log10(LRS[-1]) + step / 2, True)
            elif first == 0:
                edges[seed] = (math.log10(LRS[0]) - step / 2, True)
            else:
                edges[seed] = ((math.log10(LRS[first - 1]) + math.log10(LRS[first])) / 2, False)
        per_seed[arm] = (edges, sens)
    rows = {}
    for arm, runs in by_arm.items():
        edges, sens = per_seed[arm]
        base_edges, base_sens = per_seed["baseline"]
        common = [s for s in SEEDS if s in edges and s in base_edges]
        arm_figures = {
            "edge": interval([edges[s][0] for s in sorted(edges)]),
            "edge_seeds": len(edges), "censored": sum(c for _, c in edges.values()),
            "sens": interval([sens[s] for s in sorted(sens)]),
            "shift": None if arm == "baseline" else
            named_test([base_edges[s][0] - edges[s][0] for s in common], step, 0.05),
            "sens_shift": None if arm == "baseline" else
            interval([sens[s] - base_sens[s] for s in common if s in sens and s in base_sens]),
        }
        for i, lr in enumerate(LRS):
            at = [runs[(s, i)] for s in SEEDS]
            losses = [capped(r) for r in at if capped(r) is not None]
            judged = [r for r in at if r["status"] != "failed"]
            k = sum(r["status"] in ("unstable", "diverged") for r in judged)
            rows[(arm, i)] = dict(arm_figures, loss=interval(losses), seeds=len(losses),
                                  unstable=k, runs=len(judged),
                                  cp=clopper_pearson(k, len(judged)), band=step)
    return rows


def check(row, expected, where):
    close(float(row["loss_mean"]), expected["loss"][0], where + ": loss_mean")
    close(float(row["loss_ci_low"]), expected["loss"][1], where + ": loss_ci_low")
    close(float(row["loss_ci_high"]), expected["loss"][2], where + ": loss_ci_high")
    for key, value in (("seeds", expected["seeds"]), ("unstable_runs", expected["unstable"]),
                       ("runs", expected["runs"]), ("edge_seeds", expected["edge_seeds"]),
                       ("edge_censored", expected["censored"])):
        if int(row[key]) != value:
            sys.exit(f"{where}: {key} is {row[key]}, expected {value}")
    close(float(row["unstable_ci_low"]), expected["cp"][0], where + ": unstable_ci_low")
    close(float(row["unstable_ci_high"]), expected["cp"][1], where + ": unstable_ci_high")
    for key, value in zip(("edge_lr", "edge_lr_ci_low", "edge_lr_ci_high"), expected["edge"]):
        close(float(row[key]), 10 ** value, f"{where}: {key}")
    for key, value in zip(("lr_sensitivity", "lr_sensitivity_ci_low", "lr_sensitivity_ci_high"),
                          expected["sens"]):
        close(float(row[key]), value, f"{where}: {key}")
    close(float(row["band_decades"]), expected["band"], where + ": band_decades")
    shift = expected["shift"]
    if shift is None:
        if row["edge_verdict"] or row["edge_shift_decades"]:
            sys.exit(f"{where}: the baseline has no edge shift, got {row['edge_verdict']!r}")
        return
    close(float(row["edge_shift_decades"]), shift["estimate"], where + ": edge_shift_decades")
    for column, key in (("edge_shift_ci_low", "ci_low"), ("edge_shift_ci_high", "ci_high"),
                        ("edge_ci_level", "ci_level"), ("edge_p_raw", "p_raw")):
        close(float(row[column]), shift[key], f"{where}: {column}")
    for key in ("test", "verdict"):
        if row["edge_" + key] != shift[key]:
            sys.exit(f"{where}: edge_{key} is {row['edge_' + key]!r}, expected {shift[key]!r}")
    for key, value in zip(("lr_sensitivity_vs_baseline", "lr_sensitivity_vs_baseline_ci_low",
                           "lr_sensitivity_vs_baseline_ci_high"), expected["sens_shift"]):
        close(float(row[key]), value, f"{where}: {key}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp8lab", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    (args.out / "runs").mkdir(parents=True)
    records = make_records(np.random.default_rng(31))
    for r in records:
        (args.out / "runs" / (r["run_id"] + ".json")).write_text(json.dumps(r))
    done = subprocess.run([str(args.fp8lab), "report", str(args.out)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    print(done.stdout[-4000:])
    if done.returncode != 0:
        sys.exit(f"fp8lab report: exit status {done.returncode}")
    with open(args.out / "lr_sensitivity.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    expected = expected_rows(records)
    if len(rows) != len(expected):
        sys.exit(f"lr_sensitivity.csv has {len(rows)} rows, expected {len(expected)}")
    arm_of = {"baseline": "baseline", "mxfp8 HYBRID": "scaling=mxfp8",
              "block HYBRID": "scaling=block"}
    for row in rows:
        if row["workload"] != "w":
            sys.exit(f"workload {row['workload']!r}, expected 'w' (the spec without lr)")
        i = min(range(len(LRS)), key=lambda k: abs(LRS[k] - float(row["lr"])))
        close(float(row["lr"]), LRS[i], "lr")
        check(row, expected[(arm_of[row["arm"]], i)], f"{row['arm']} at lr {row['lr']}")
    # The direction the records were made with: mxfp8's edge is lower than the baseline's.
    mxfp8 = next(r for r in rows if r["arm"] == "mxfp8 HYBRID")
    if float(mxfp8["edge_shift_decades"]) <= 0:
        sys.exit("mxfp8's edge shift should be positive (a lower edge)")
    html = (args.out / "report.html").read_text()
    if "final eval loss (capped at the initial loss) against learning rate: w" not in html:
        sys.exit("report.html has no loss-against-lr chart")
    md = (args.out / "report.md").read_text()
    for title in ("Learning-rate sensitivity: final eval loss against learning rate",
                  "Learning-rate sensitivity: stability edge and LR sensitivity"):
        if title not in md:
            sys.exit(f"report.md has no table {title!r}")
    print(f"lr_sensitivity.csv: {len(rows)} rows agree with scipy")


if __name__ == "__main__":
    main()
