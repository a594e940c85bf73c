"""python -m fp8lab ARGS: the fp8lab command (experiments/main.cpp) with ARGS.

The package builds sim, recipes and the ops only (pip install stays short), not the command, which
needs experiments/ (LibTorch workloads, Arrow, the runner) and is built by scripts/build
(build/experiments/fp8lab). This runs that program in place of the interpreter (exec, so its
output, signals and exit code are the command's): $FP8LAB_CLI when set, else `fp8lab` on PATH.
Neither: exit 2 saying how to get one.
"""

import os
import shutil
import sys


def main() -> None:
    command = os.environ.get("FP8LAB_CLI") or shutil.which("fp8lab")
    if not command:
        sys.stderr.write(
            "python -m fp8lab: the fp8lab command was not found. The package holds the ops only; "
            "build the command with scripts/build (it writes build/experiments/fp8lab), then set "
            "FP8LAB_CLI=/path/to/build/experiments/fp8lab or put it on PATH.\n"
        )
        sys.exit(2)
    try:
        os.execv(command, [command, *sys.argv[1:]])
    except OSError as e:
        sys.stderr.write(f"python -m fp8lab: cannot run {command} (FP8LAB_CLI or PATH): {e}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
