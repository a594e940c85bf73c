"""Executes every notebook of a folder top to bottom with nbclient against one results directory
(FP8LAB_RESULTS_DIR for the kernel); exit status 1 if any cell of any notebook raised.

The executed copies go to --executed (outputs included) for reading after a failure; the committed
notebooks are not touched.
"""
import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def execute(path, executed_dir):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.monotonic()
    try:
        client.execute()
        error = None
    except CellExecutionError as failure:
        error = failure
    if executed_dir:
        nbformat.write(notebook, executed_dir / path.name)
    seconds = time.monotonic() - start
    if error is not None:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the traceback's terminal colours
        print(f"FAIL {path.name} ({seconds:.1f} s):\n{text}", flush=True)
        return False
    print(f"ok   {path.name}: {len(notebook.cells)} cells in {seconds:.1f} s", flush=True)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("notebooks", type=Path, help="folder of .ipynb files")
    parser.add_argument("--results", required=True, type=Path, help="fp8lab output directory")
    parser.add_argument("--executed", type=Path, help="folder for the executed copies")
    args = parser.parse_args()
    paths = sorted(args.notebooks.glob("*.ipynb"))
    if not paths:
        sys.exit(f"no notebooks in {args.notebooks}")
    os.environ["FP8LAB_RESULTS_DIR"] = str(args.results.resolve())
    if args.executed:
        args.executed.mkdir(parents=True, exist_ok=True)
    print(f"executing {len(paths)} notebooks against {args.results}", flush=True)
    passed = [execute(path, args.executed) for path in paths]
    sys.exit(0 if all(passed) else 1)


if __name__ == "__main__":
    main()
