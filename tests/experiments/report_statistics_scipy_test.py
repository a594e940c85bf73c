"""The report's named tests recomputed from results.jsonl with scipy (issue 31, "Done when").

Runs a small sweep (report_statistics_sweep.yaml: three forward formats on gpt-tiny, three seeds,
one verdict and one contrast pre-registered), then recomputes every verdict row of summary.csv and
every row of contrasts.csv from the run records alone, with an implementation of its own: the
paired tail errors, the interval the test used, the named test and its p-value (scipy.stats.t),
the Holm adjustment per family, mde80 (scipy.stats.nct, brentq) and seeds_for_80, the power of the
row's own test (two-sided and one-sided noncentral t; TOST by scipy.integrate.quad over the sample
sd's chi distribution). The C++ side
uses Boost.Math (experiments/stats/named_tests.hpp); agreement to 1e-6 relative is the check.

Usage: report_statistics_scipy_test.py --fp8lab BUILD/experiments/fp8lab --sweep YAML --out DIR
"""
import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from scipy import integrate, optimize, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from fp8lab_command import fresh_sweep, sweep_arguments  # noqa: E402

MIN_SEEDS = 3
POWER = 0.80


def tail_mean(record, field):
    """Mean of the finite eval values of `field` over the last ceil(10%) eval points."""
    values = [row[field] for row in record.get("eval", [])
              if isinstance(row.get(field), (int, float)) and math.isfinite(row[field])]
    if not values:
        return None
    count = max(1, math.ceil(0.1 * len(values)))
    return sum(values[-count:]) / count


def settings(label):
    return dict(word.split("=", 1) for word in label.split() if "=" in word)


def power(effect, sd, n, alpha):
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    ncp = abs(effect) * math.sqrt(n) / sd
    # The lower tail as the upper tail of -T' (scipy's nct.cdf gives nan there for a large ncp).
    return stats.nct.sf(critical, df, ncp) + stats.nct.sf(critical, df, -ncp)


def mde80(n, sd, alpha):
    if sd == 0:
        return 0.0
    high = sd / math.sqrt(n)
    while power(high, sd, n, alpha) < POWER:
        high *= 2
    return optimize.brentq(lambda e: power(e, sd, n, alpha) - POWER, 0, high, xtol=1e-14,
                           rtol=1e-12)


def non_inferiority_power(effect, band, sd, n, alpha):
    df = n - 1
    return stats.nct.sf(stats.t.ppf(1 - alpha, df), df, (band - effect) * math.sqrt(n) / sd)


def tost_power(effect, band, sd, n, alpha):
    """P(both one-sided tests reject): over u = s / sd (chi with n - 1 df, scaled), the standardized
    mean Z must lie in (c u - d1, d2 - c u)."""
    df = n - 1
    c = stats.t.ppf(1 - alpha, df)
    d1, d2 = (band + effect) * math.sqrt(n) / sd, (band - effect) * math.sqrt(n) / sd
    u_max = (d1 + d2) / (2 * c)
    low, high = max(0.0, 1 - 20 / math.sqrt(2 * df)), min(u_max, 1 + 20 / math.sqrt(2 * df))
    if high <= low:
        return 0.0

    def density(u):
        inside = stats.norm.cdf(d2 - c * u) - stats.norm.cdf(c * u - d1)
        return max(0.0, inside) * stats.chi.pdf(u * math.sqrt(df), df) * math.sqrt(df)

    return integrate.quad(density, low, high, epsabs=1e-13, epsrel=1e-12, limit=500)[0]


def smallest_n(power_at, cap=100000):
    """The smallest n >= 2 with power_at(n) >= 80% (power rising with n), None up to cap."""
    if power_at(2) >= POWER:
        return 2
    low, high = 2, 4
    while power_at(high) < POWER:
        if high >= cap:
            return None
        low, high = high, min(cap, high * 2)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if power_at(mid) >= POWER else (mid, high)
    return high


def seeds_for_80(test, mean, sd, band, alpha, n):
    """The seeds the row's settling test needs for 80% power at the observed mean and sd."""
    if sd == 0:  # the sign tests: p = 0.5^n (one-sided) or 2 x 0.5^n below alpha
        two = test.endswith("=+b") or test.endswith("=0")
        can = {"sign test mean=+b": mean > band, "sign TOST": abs(mean) < band,
               "sign test mean=0": mean != 0, "sign non-inferiority": mean < band}[test]
        if not can:
            return None
        m = 2
        while (2 if two else 1) * 0.5 ** m >= alpha:
            m += 1
        return m
    if test == "TOST":
        return smallest_n(lambda m: tost_power(mean, band, sd, m, alpha))
    if test == "non-inferiority":
        return smallest_n(lambda m: non_inferiority_power(mean, band, sd, m, alpha))
    effect = mean - band if test == "t-test mean=+b" else mean
    if effect == 0:
        return None
    return smallest_n(lambda m: power(effect, sd, m, alpha))


def named_test(values, band, alpha, oriented=False):
    """The verdict word, test, p, interval level and bounds, as docs/results-schema.md states.

    oriented: a contrast (mean >= 0), whose words are worse beyond band, equivalent, worse and
    inconclusive only; an inconclusive one shows the closest of the beyond-band test, TOST and the
    test of mean = 0."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    se = sd / math.sqrt(n)
    t = stats.t(n - 1)
    if se > 0:
        def tail(x):
            return t.sf(x / se)
    else:  # identical values: the exact sign test, all n on one side
        def tail(x):
            return 0.5 ** n if x > 0 else 1.0
    p_beyond = min(1.0, 2 * tail(mean - band))
    p_zero = min(1.0, 2 * tail(abs(mean)))
    p_upper = tail(band - mean)
    p_lower = tail(mean + band)
    p_tost = max(p_upper, p_lower)
    candidates = {"t-test mean=+b": (p_beyond, 1 - alpha), "TOST": (p_tost, 1 - 2 * alpha),
                  "t-test mean=0": (p_zero, 1 - alpha), "non-inferiority": (p_upper, 1 - 2 * alpha)}
    if mean > band and p_beyond < alpha:
        verdict, test = "worse beyond band", "t-test mean=+b"
    elif p_tost < alpha:
        verdict, test = "equivalent", "TOST"
    elif p_zero < alpha and (not oriented or mean > 0):
        verdict, test = ("worse" if mean > 0 else "better"), "t-test mean=0"
    elif p_upper < alpha and not oriented:
        verdict, test = "not worse", "non-inferiority"
    else:
        verdict = "inconclusive"
        first = "TOST" if oriented else "non-inferiority"
        test = min([first, "t-test mean=+b", "TOST", "t-test mean=0"],
                   key=lambda name: candidates[name][0])
    p, level = candidates[test]
    # seeds_for_80 is the power of the settling test at the band (issue 41): the verdict's own
    # test where it is at the band, else TOST inside the band, non-inferiority below -b, the test
    # of mean = +b from +b up.
    settling = test
    if verdict == "inconclusive" or test == "t-test mean=0":
        settling = ("t-test mean=+b" if mean >= band
                    else "TOST" if mean > -band else "non-inferiority")
    sign = {"t-test mean=+b": "sign test mean=+b", "TOST": "sign TOST",
            "t-test mean=0": "sign test mean=0", "non-inferiority": "sign non-inferiority"}
    if se == 0:
        test, settling = sign[test], sign[settling]
    half = t.ppf((1 + level) / 2) * se
    return {"estimate": mean, "ci_low": mean - half, "ci_high": mean + half, "ci_level": level,
            "p_raw": p, "test": test, "verdict": verdict, "mde80": mde80(n, sd, alpha),
            "seeds_for_80": seeds_for_80(settling, mean, sd, band, alpha, n)}


def holm(p_values):
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p_values[i]))
        adjusted[i] = running
    return adjusted


def close(a, b, what):
    if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12):
        sys.exit(f"{what}: the report has {a!r}, scipy gives {b!r}")


def compare(row, expected, where):
    for key in ("estimate", "ci_low", "ci_high", "ci_level", "p_raw", "p_holm", "mde80"):
        close(float(row[key]), expected[key], f"{where}: {key}")
    for key in ("test", "verdict", "family"):
        if row[key] != expected[key]:
            sys.exit(f"{where}: {key} is {row[key]!r}, expected {expected[key]!r}")
    if int(row["family_size"]) != expected["family_size"]:
        sys.exit(f"{where}: family_size {row['family_size']}, expected {expected['family_size']}")
    seeds = int(row["seeds_for_80"]) if row["seeds_for_80"] else None
    if seeds != expected["seeds_for_80"]:
        sys.exit(f"{where}: seeds_for_80 {seeds}, expected {expected['seeds_for_80']}")


def main():
    args = sweep_arguments(__doc__).parse_args()
    fresh_sweep(args, 30, tail=4000)

    records = [json.loads(line) for line in (args.out / "results.jsonl").read_text().splitlines()]
    sweep = json.loads((args.out / "sweep.json").read_text())
    band, alpha = sweep["practical_band"], sweep["alpha"]
    by_id = {r["run_id"]: r for r in records}
    fp8 = [r for r in records if r["kind"] == "fp8"]
    groups = defaultdict(list)  # recipe -> its runs (one workload, one baseline family here)
    for r in fp8:
        groups[r["recipe_canonical"]].append(r)

    def recipe_settings(runs):
        return [settings(label) for label in runs[0]["source"]["combinations"]]

    confirmatory_verdicts = [settings(h["verdict"]) for h in sweep["hypotheses"] if "verdict" in h]
    confirmatory_contrasts = [(settings(h["contrast"][0]), settings(h["contrast"][1]))
                              for h in sweep["hypotheses"] if "contrast" in h]

    tests = {}  # key -> expected columns
    for recipe, runs in groups.items():
        if any(r["status"] != "finished" for r in runs):
            continue
        errors = [tail_mean(r, "rel_diff") for r in runs]
        if len(errors) < MIN_SEEDS:
            continue
        t = named_test(errors, band, alpha)
        t["family"] = ("confirmatory"
                       if any(s in confirmatory_verdicts for s in recipe_settings(runs))
                       else "exploratory")
        tests[("verdict", recipe)] = t

    contrast_rows = list(csv.DictReader((args.out / "contrasts.csv").open()))
    if len(contrast_rows) != 3:
        sys.exit(f"contrasts.csv has {len(contrast_rows)} rows, expected 3 (one per pair of formats)")
    for row in contrast_rows:
        a = {by_id[i]["seed"]: tail_mean(by_id[i], "loss") for i in row["a_runs"].split()}
        b = {by_id[i]["seed"]: tail_mean(by_id[i], "loss") for i in row["b_runs"].split()}
        d = [(a[s] - b[s]) / b[s] for s in sorted(set(a) & set(b))]
        if sum(d) < 0:
            sys.exit(f"contrast {row['a']} vs {row['b']}: A must be the recipe with the higher loss")
        t = named_test(d, band, alpha, oriented=True)
        sa = [settings(x) for x in by_id[row["a_runs"].split()[0]]["source"]["combinations"]]
        sb = [settings(x) for x in by_id[row["b_runs"].split()[0]]["source"]["combinations"]]
        pre = any((x in sa and y in sb) or (x in sb and y in sa)
                  for x, y in confirmatory_contrasts)
        t["family"] = "confirmatory" if pre else "exploratory"
        tests[("contrast", row["a"], row["b"])] = t

    for family in ("confirmatory", "exploratory"):
        keys = [k for k, t in tests.items() if t["family"] == family]
        for k, p in zip(keys, holm([tests[k]["p_raw"] for k in keys])):
            tests[k]["p_holm"] = p
            tests[k]["family_size"] = len(keys)
    if not any(t["family"] == "confirmatory" for t in tests.values()):
        sys.exit("no row matched the pre-registered hypotheses")

    checked = 0
    for row in csv.DictReader((args.out / "summary.csv").open()):
        recipe = by_id[row["run_id"]]["recipe_canonical"]
        expected = tests.get(("verdict", recipe))
        if row["verdict"] == "failed" and not row["test"]:
            continue  # did not train: no test, by a rule this file does not recompute
        if expected is None:
            if row["test"]:
                sys.exit(f"summary.csv {row['run_id']}: a test where scipy finds no 3 seeds")
            continue
        compare(row, expected, f"summary.csv {row['run_id']}")
        if int(row["runs"]) != len(groups[recipe]) or row["unstable_runs"] != "0":
            sys.exit(f"summary.csv {row['run_id']}: runs {row['runs']}, unstable_runs "
                     f"{row['unstable_runs']}, expected {len(groups[recipe])} and 0")
        checked += 1
    for row in contrast_rows:
        compare(row, tests[("contrast", row["a"], row["b"])], f"contrasts.csv {row['a']} vs {row['b']}")
        checked += 1
    if checked < 9 + 3:
        sys.exit(f"only {checked} rows checked; expected the 9 FP8 runs' rows and 3 contrasts")
    label = {recipe: runs[0]["recipe_label"] for recipe, runs in groups.items()}
    print(f"{checked} rows agree with scipy: " + "; ".join(
        f"{label[k[1]] if k[0] == 'verdict' else k[1] + ' vs ' + k[2]}: {t['verdict']} "
        f"({t['test']}, p {t['p_raw']:.3g}, Holm {t['p_holm']:.3g}, {t['family']})"
        for k, t in tests.items()))


if __name__ == "__main__":
    main()
