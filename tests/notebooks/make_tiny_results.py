"""Fresh input for the notebooks test: the tiny sweep and `fp8lab check --json` into OUT.

OUT is emptied first, so that the notebooks never read a stale report. `fp8lab check` exits 77
where there is no GPU (and records why in check.json) and 1 when a kernel mismatches (the gpu tests
fail on that; gpu_vs_reference.ipynb shows it): both are input for the notebooks, not errors here.
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def run(command, accepted=(0,)):
    print("$", " ".join(str(c) for c in command), flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(done.stdout, flush=True)
    if done.returncode not in accepted:
        sys.exit(f"exit status {done.returncode} (accepted: {accepted})")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp8lab", required=True, type=Path)
    parser.add_argument("--sweep", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--steps", default="30")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    run([args.fp8lab, "sweep", args.sweep, "--out", args.out, "--steps", args.steps, "--jobs", "2"])
    run([args.fp8lab, "check", "--no-exhaustive", "--json", args.out / "check.json"],
        accepted=(0, 1, 77))
    for name in ("results.jsonl", "summary.csv", "check.json"):
        if not (args.out / name).is_file():
            sys.exit(f"{args.out / name} was not written")


if __name__ == "__main__":
    main()
