#!/usr/bin/env python3
"""The docs' verdict words against the report's, for the same records (issue 42, item 7).

docs/literature.md quotes a sweep's report between two markers:

    <!-- report-words: docs/records/default-sweep -->
    | table | row | word | p raw | p Holm | holds after Holm |
    ...
    <!-- /report-words -->

This test rebuilds that report from the kept records (docs/records/<name>/: results.jsonl.gz and
the probe and layer-statistics sidecars) with the fp8lab under test, reads the words of its ranked
table, its contrasts and its on-trajectory pairwise table, and fails on any quoted row whose word,
p or Holm p differs from the report's, any ranked-table or contrast row the docs leave out, and a
quoted row the report does not have. `--print` prints the block the report gives, for the docs.
"""
import argparse
import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

BEGIN = re.compile(r"<!-- report-words: (\S+) -->")
END = "<!-- /report-words -->"
HEADER = "| table | row | word | p raw | p Holm | holds after Holm |"
ALPHA = 0.05


def cells(line):
    """The cells of a markdown table row; `\\|` inside a cell is not a separator."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in parts[1:-1]]


def table_after(lines, heading):
    """The data rows (as cell lists) of the first table after a `## heading` line."""
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == heading)
    except StopIteration:
        return None
    rows, seen_table = [], False
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            seen_table = True
            rows.append(cells(line))
        elif seen_table:
            break
    return rows[2:]  # header and separator


def word_of(verdict_cell):
    """`equivalent (p Holm 0.47 > alpha ...)` -> `equivalent`."""
    return verdict_cell.split(" (", 1)[0].strip()


def holm_p(cell):
    """`0.47 (exploratory, 15)` -> `0.47`."""
    return cell.split(" (", 1)[0].strip()


def holds(word, p_holm):
    return "yes" if word != "inconclusive" and float(p_holm) <= ALPHA else "no"


def report_rows(report_md):
    """(table, row) -> (word, p raw, p Holm, holds after Holm), in report order."""
    lines = report_md.read_text().splitlines()
    rows = {}
    ranked = table_after(lines, "## Recipes ranked (best first)")
    probes = table_after(lines, "## On the baseline's trajectory: recipes against each other")
    # A probe-only record set (a baseline run with --probe, no trained recipe) has no ranked
    # table; the words it gives are its pairwise table's.
    if ranked is None and probes is None:
        sys.exit(f"{report_md}: neither a '## Recipes ranked (best first)' table nor a probe table")
    for c in ranked or []:
        word, p, ph = word_of(c[3]), c[5], holm_p(c[6])
        rows[("recipes", c[1])] = (word, p, ph, holds(word, ph))
    for c in table_after(lines, "## Contrasts between recipes on the same seeds") or []:
        key = f"{c[0]} {c[1]} vs {c[2]}, {c[3]}"
        word, p, ph = word_of(c[6]), c[8], holm_p(c[9])
        rows[("contrasts", key)] = (word, p, ph, holds(word, ph))
    for c in probes or []:
        key = f"{c[0]}: {c[1]} vs {c[2]}"
        # The pairwise table states a direction only when it holds after Holm.
        word, p, ph = c[7], c[5], holm_p(c[6])
        rows[("probes", key)] = (word, p, ph, "yes" if word != "inconclusive" else "no")
    return rows


def docs_blocks(doc):
    """records name -> {(table, row): (word, p raw, p Holm, holds)} for every marked block."""
    blocks, current, name = {}, None, None
    for n, line in enumerate(doc.read_text().splitlines(), 1):
        m = BEGIN.search(line)
        if m:
            name, current = m.group(1), {}
            continue
        if current is None:
            continue
        if line.strip() == END:
            blocks[name], current = current, None
            continue
        if not line.startswith("|") or line.strip() == HEADER or line.startswith("|---"):
            continue
        c = cells(line)
        if len(c) != 6:
            sys.exit(f"{doc}:{n}: a report-words row needs 6 cells ({HEADER}), got {len(c)}")
        current[(c[0], c[1])] = tuple(c[2:])
    if current is not None:
        sys.exit(f"{doc}: the report-words block for {name} has no closing {END}")
    return blocks


def rebuild_report(fp8lab, records, out):
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with gzip.open(records / "results.jsonl.gz", "rb") as src, open(out / "results.jsonl", "wb") as dst:
        shutil.copyfileobj(src, dst)
    for sidecar in ("probes", "layer_stats"):
        if (records / sidecar).is_dir():
            shutil.copytree(records / sidecar, out / sidecar)
    subprocess.run([fp8lab, "report", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out / "report.md"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fp8lab", required=True)
    ap.add_argument("--root", required=True, help="the repository (docs/ and docs/records/)")
    ap.add_argument("--out", required=True, help="a scratch directory for the rebuilt reports")
    ap.add_argument("--print", dest="print_block", metavar="RECORDS",
                    help="print the block for docs/records/RECORDS's report and stop")
    args = ap.parse_args()
    root, out = Path(args.root), Path(args.out)
    if args.print_block:
        name = f"docs/records/{args.print_block}"
        rows = report_rows(rebuild_report(args.fp8lab, root / name, out / args.print_block))
        print(f"<!-- report-words: {name} -->\n{HEADER}\n|---|---|---|---|---|---|")
        for (table, row), v in rows.items():
            if table != "probes" or (v[0] != "inconclusive" and row.startswith("relative error:")):
                print(f"| {table} | {row} | " + " | ".join(v) + " |")
        print(END)
        return 0
    doc = root / "docs" / "literature.md"
    blocks = docs_blocks(doc)
    if not blocks:
        sys.exit(f"{doc}: no <!-- report-words: ... --> block: nothing ties the docs' words to records")
    failures = []
    for name, quoted in blocks.items():
        records = root / name
        if not (records / "results.jsonl.gz").is_file():
            failures.append(f"{doc}: the block names {name}, which holds no results.jsonl.gz")
            continue
        got = report_rows(rebuild_report(args.fp8lab, records, out / Path(name).name))
        for key, words in quoted.items():
            if key not in got:
                failures.append(f"{name}: docs quote {key[0]} row '{key[1]}', the report has none")
            elif got[key] != words:
                failures.append(f"{name}: {key[0]} row '{key[1]}': docs say {words}, "
                                f"the report says {got[key]} (word, p raw, p Holm, holds after Holm)")
        for key in got:
            if key[0] != "probes" and key not in quoted:
                failures.append(f"{name}: the report's {key[0]} row '{key[1]}' ({got[key][0]}) "
                                f"is not quoted in {doc.name}")
        print(f"{name}: {len(quoted)} quoted rows checked against the rebuilt report "
              f"({sum(1 for k in got if k[0] != 'probes')} recipe and contrast rows in it)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
