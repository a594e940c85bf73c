"""Fresh input for the notebooks test: the tiny sweep and `fp8lab check --json` into OUT.

OUT is emptied first, so that the notebooks never read a stale report. `fp8lab check` exits 77
where there is no GPU (and records why in check.json) and 1 when a kernel mismatches (the gpu tests
fail on that; gpu_vs_reference.ipynb shows it): both are input for the notebooks, not errors here.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from fp8lab_command import fresh_sweep, run, sweep_arguments  # noqa: E402


def main():
    parser = sweep_arguments(__doc__)
    parser.add_argument("--steps", default="30")
    args = parser.parse_args()
    fresh_sweep(args, args.steps)
    run([args.fp8lab, "check", "--no-exhaustive", "--json", args.out / "check.json"],
        accepted=(0, 1, 77))
    for name in ("results.jsonl", "summary.csv", "check.json"):
        if not (args.out / name).is_file():
            sys.exit(f"{args.out / name} was not written")


if __name__ == "__main__":
    main()
