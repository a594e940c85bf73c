"""What the Python test scripts that drive the fp8lab command share: each command printed with its
output, and a sweep into an --out that is emptied first (so that nothing reads a stale result).

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
    from fp8lab_command import fresh_sweep, run, sweep_arguments
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def run(command, accepted=(0,), tail=None):
    """Runs `command`, prints it and its output (the last `tail` characters when given), and exits
    with the status when it is not one of `accepted`."""
    print("$", " ".join(str(c) for c in command), flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(done.stdout[-tail:] if tail else done.stdout, flush=True)
    if done.returncode not in accepted:
        sys.exit(f"exit status {done.returncode} (accepted: {accepted})")


def sweep_arguments(description):
    """The parser of --fp8lab, --sweep and --out, to which a script adds its own options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--fp8lab", required=True, type=Path)
    parser.add_argument("--sweep", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    return parser


def fresh_sweep(args, steps, tail=None):
    """`fp8lab sweep` of args.sweep into an emptied args.out, `steps` steps, two jobs."""
    shutil.rmtree(args.out, ignore_errors=True)
    run([args.fp8lab, "sweep", args.sweep, "--out", args.out, "--steps", str(steps), "--jobs", "2"],
        tail=tail)
