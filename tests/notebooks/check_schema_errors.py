"""A results directory whose schema lost a field or a column makes the notebooks fail, with a message
that names the file, the line and the field. Copies of a fresh results directory, each with one name
changed, are loaded through notebooks/fp8lab_results.py, and sweep_overview.ipynb is executed against
one of them: that execution must fail (this is what makes notebooks_execute fail on a schema change).

    check_schema_errors.py NOTEBOOKS_DIR RESULTS_DIR
"""
import json
import os
import sys
import tempfile
from pathlib import Path

from execute_notebooks import execute_notebook


def broken_copy(results, into, edit_record=None, edit_summary=None):
    """results.jsonl and summary.csv of `results` in `into`; edit_record(record) -> bool changes the
    first record it returns True for (returns that record's line number)."""
    into.mkdir()
    changed_line = None
    lines = (results / "results.jsonl").read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(lines, start=1):
        record = json.loads(text)
        if edit_record and changed_line is None and edit_record(record):
            changed_line = number
            lines[number - 1] = json.dumps(record)
    (into / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = (results / "summary.csv").read_text(encoding="utf-8")
    (into / "summary.csv").write_text(edit_summary(summary) if edit_summary else summary,
                                      encoding="utf-8")
    if edit_record and changed_line is None:
        sys.exit(f"{results / 'results.jsonl'}: no record to break (is it a fresh tiny sweep?)")
    return changed_line


def rename(mapping, old, new):
    mapping[new] = mapping.pop(old)


def rename_final_field(record):
    if record["kind"] == "fp8" and record["status"] == "finished":
        rename(record["final"], "eval_rel_diff", "eval_relative_difference")
        return True
    return False


def rename_layer_field(record):
    if record.get("layers"):
        rename(record["layers"][0], "underflowed", "underflow")
        return True
    return False


def shadow_check_without_compared(record):
    if record["kind"] == "fp8":
        record["shadow_check"] = {"every": 1, "operations": 1, "mismatches": 0, "by_key": [],
                                  "first": []}
        return True
    return False


def bump_schema_version(record):
    record["schema_version"] = 2
    return True


def main():
    notebooks, results = Path(sys.argv[1]), Path(sys.argv[2])
    sys.path.insert(0, str(notebooks))
    import fp8lab_results as fr

    failures = []

    def expect_error(name, load, *needles):
        try:
            load()
        except fr.ResultsSchemaError as error:
            missing = [n for n in needles if n not in str(error)]
            if missing:
                failures.append(f"{name}: message lacks {missing}: {error}")
            print(f"ok   {name}: {error}")
            return
        failures.append(f"{name}: loaded without an error")

    with tempfile.TemporaryDirectory() as temp:
        temp = Path(temp)
        # (case, folder, the edit of one record, what the error must say besides the line)
        record_cases = [
            ("renamed final.eval_rel_diff", "final", rename_final_field,
             "'final' has no field 'eval_rel_diff'"),
            ("renamed layers[0].underflowed", "layers", rename_layer_field,
             "'layers' row 0 has no field 'underflowed'"),
            ("shadow_check without compared", "shadow", shadow_check_without_compared,
             "'shadow_check' has no field 'compared'"),
            ("schema_version 2", "version", bump_schema_version, "schema_version 2 is not one"),
        ]
        for name, folder, edit, message in record_cases:
            line = broken_copy(results, temp / folder, edit)
            expect_error(name, lambda folder=folder: fr.load_records(temp / folder),
                         f"results.jsonl:{line}:", message)
        broken_copy(results, temp / "summary",
                    edit_summary=lambda text: text.replace(",run_verdict,", ",verdict_text,", 1))
        expect_error("renamed summary.csv column run_verdict",
                     lambda: fr.load_summary(temp / "summary"),
                     "summary.csv:1:", "no column 'run_verdict'")

        path = notebooks / "sweep_overview.ipynb"
        os.environ["FP8LAB_RESULTS_DIR"] = str(temp / "final")
        _, error = execute_notebook(path)
        if error is None:
            failures.append(f"{path.name} ran to the end on results without final.eval_rel_diff")
        elif "ResultsSchemaError" not in error or "'eval_rel_diff'" not in error:
            failures.append(f"{path.name} failed, but not on the schema: {error}")
        else:
            print(f"ok   {path.name} fails on the renamed field: {error.strip().splitlines()[-1]}")

    for failure in failures:
        print(f"FAIL {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
