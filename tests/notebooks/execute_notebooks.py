"""Executes every notebook of a folder top to bottom with nbclient against one results directory
(FP8LAB_RESULTS_DIR for the kernel); exit status 1 if any cell of any notebook raised.

The executed copies go to --executed (outputs included) for reading after a failure; the committed
notebooks are not touched. --images NAME=N also fails a notebook that ran but drew other than N
figures (a plot that silently fell back to a "nothing to draw" message). execute_notebook() is
shared with the other notebook tests.
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

# The "python3" kernel of the Python running this script (its .venv), even where the user has a
# kernel of that name of their own.
os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


def execute_notebook(path):
    """Runs the notebook at `path` in its own folder with the current environment. Returns the
    executed notebook and the error's text (None when every cell ran)."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(path).parent)}})
    try:
        client.execute()
        return notebook, None
    except CellExecutionError as error:
        return notebook, re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # no terminal colours


def count_images(notebook):
    return sum("image/png" in output.get("data", {}) for cell in notebook.cells
               if cell.cell_type == "code" for output in cell.outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("notebooks", type=Path, help="folder of .ipynb files")
    parser.add_argument("--results", required=True, type=Path, help="fp8lab output directory")
    parser.add_argument("--executed", type=Path, help="folder for the executed copies")
    parser.add_argument("--images", action="append", default=[], metavar="NAME=N",
                        help="figures notebook NAME must draw (repeatable)")
    args = parser.parse_args()
    expected_images = {name: int(n) for name, n in (e.split("=") for e in args.images)}
    paths = sorted(args.notebooks.glob("*.ipynb"))
    if not paths:
        sys.exit(f"no notebooks in {args.notebooks}")
    os.environ["FP8LAB_RESULTS_DIR"] = str(args.results.resolve())
    if args.executed:
        args.executed.mkdir(parents=True, exist_ok=True)
    print(f"executing {len(paths)} notebooks against {args.results}", flush=True)
    failed = 0
    for path in paths:
        start = time.monotonic()
        notebook, error = execute_notebook(path)
        seconds = time.monotonic() - start
        if args.executed:
            nbformat.write(notebook, args.executed / path.name)
        images = count_images(notebook)
        if error is None and expected_images.get(path.name, images) != images:
            error = f"drew {images} figures, expected {expected_images[path.name]}"
        if error is None:
            print(f"ok   {path.name}: {len(notebook.cells)} cells, {images} figures in "
                  f"{seconds:.1f} s", flush=True)
        else:
            failed += 1
            print(f"FAIL {path.name} ({seconds:.1f} s):\n{error}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
