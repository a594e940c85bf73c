"""The committed notebooks carry no outputs and keep the shape every notebook promises: a first
markdown cell that says which question it answers and which fp8lab command made its input, and one
code cell tagged `parameters`. Prints each violation with the notebook and cell number.

    check_notebooks_stripped.py FOLDER            check (the CTest test notebooks_outputs_stripped)
    check_notebooks_stripped.py --strip FOLDER    clear the outputs in place first
"""
import sys
from pathlib import Path

import nbformat


def problems(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    found = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        if cell.outputs:
            found.append(f"cell {number} has {len(cell.outputs)} output(s)")
        if cell.execution_count is not None:
            found.append(f"cell {number} has execution_count {cell.execution_count}")
    first = notebook.cells[0] if notebook.cells else None
    if first is None or first.cell_type != "markdown":
        found.append("the first cell is not markdown")
    else:
        for needed in ("**Question.**", "**Input.**", "`fp8lab "):
            if needed not in first.source:
                found.append(f"the first cell does not contain {needed!r}")
    tagged = [n for n, c in enumerate(notebook.cells, start=1)
              if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1:
        found.append(f"{len(tagged)} cells are tagged 'parameters' (cells {tagged}); expected one")
    return found


def strip(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.write(notebook, path)


def main():
    arguments = sys.argv[1:]
    stripping = arguments[:1] == ["--strip"]
    if len(arguments) != 1 + stripping:
        sys.exit(__doc__)
    folder = Path(arguments[-1])
    paths = sorted(folder.glob("*.ipynb"))
    if not paths:
        sys.exit(f"no notebooks in {folder}")
    if stripping:
        for path in paths:
            strip(path)
    failed = False
    for path in paths:
        found = problems(path)
        for problem in found:
            print(f"{path}: {problem}")
        failed |= bool(found)
        if not found:
            print(f"ok   {path.name}")
    if failed:
        print(f"Strip the outputs before committing: {sys.argv[0]} --strip {folder}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
