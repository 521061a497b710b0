#!/usr/bin/env python3
"""Builds the claims table of docs/results/claims.md from drover eval's
summary.json files (one per workload, run with the default contender set):
for STRN's and SAS's claims, Drover's figure against the best baseline,
paired over seeds with a 95% t-interval.

    python3 docs/results/claims.py docs/results/eval-*/summary.json

Every seed is counted: the runs are paired by seed (a seed one policy lacks
is an error), a row says how many seeds its ratio is over, and the seeds
where the comparison's figure is zero (no ratio exists; e.g. no straggling
worker-iteration at all) get a line of their own with both figures, as do
seeds where either figure is not a number.
"""
import json
import math
import sys

# Two-sided 95% Student-t quantiles by degrees of freedom.
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
     9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
     16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 29: 2.045}


def t95(df):
    return T.get(df) or T[max(k for k in T if k <= df)]


def finite(x):
    return x is not None and not math.isnan(x) and not math.isinf(x)


def paired(a, b):
    """a and b map seed -> figure. Returns the mean and 95% half-width of
    a_s / b_s - 1 over the seeds with a positive, finite b_s and a finite
    a_s, the number of those seeds, and the other seeds as (seed, a_s, b_s)."""
    if set(a) != set(b):
        raise SystemExit(f"claims: the runs' seeds differ: {sorted(set(a) ^ set(b))}")
    xs, left = [], []
    for s in sorted(a):
        x, y = a[s], b[s]
        if finite(x) and finite(y) and y > 0:
            xs.append(x / y - 1)
        else:
            left.append((s, x, y))
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0, left
    m = sum(xs) / n
    if n < 2:
        return m, math.nan, n, left
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, t95(n - 1) * sd / math.sqrt(n), n, left


def runs(p, key):
    """Seed -> the run's figure (None where the JSON has null)."""
    return {r["seed"]: (math.nan if r.get(key) is None else r[key]) for r in p["runs"]}


def best(pols, key):
    """The baseline with the lowest mean of key."""
    base = [p for p in pols if p.get("baseline")] or [p for p in pols if p["name"] not in ("strn", "sas") and "oracle" not in p["name"]]
    return min(base, key=lambda p: sum(runs(p, key).values()) / len(p["runs"]))


def fmt(m, h):
    if math.isnan(m):
        return "-"
    return f"{100 * m:+.1f}% ± {100 * h:.1f}"


def num(x):
    return "n/a" if not finite(x) else f"{x:g}"


claims = [
    ("STRN", "-59% avg TTA", "strn", "avg_tta_s"),
    ("SAS", "-45% avg JCT", "sas", "avg_jct_s"),
    ("SAS", "-63% stragglers", "sas", "straggler_worker_iterations"),
]


def table(paths, out=sys.stdout):
    print("| claim | workload | best baseline (by that metric) | Drover: method vs best baseline | vs first-fit+bsp |", file=out)
    print("|---|---|---|---|---|", file=out)
    for who, claim, name, key in claims:
        for path in paths:
            with open(path) as f:
                d = json.load(f)
            pols = d["policies"]
            by = {p["name"]: p for p in pols}
            if name not in by:
                continue
            b = best(pols, key)
            mine = runs(by[name], key)
            m, h, n, left = paired(mine, runs(b, key))
            ff = by.get("first-fit+bsp")
            vs_ff, ff_left = "-", []
            if ff:
                fm, fh, fn, ff_left = paired(mine, runs(ff, key))
                vs_ff = fmt(fm, fh) + ("" if fn == len(mine) else f" ({fn} seeds)")
            seeds = f"{len(mine)} seeds" if n == len(mine) else f"{n} of {len(mine)} seeds paired"
            print(f"| {who} {claim} | {d['workload']} ({seeds}) | {b['name']} | {fmt(m, h)} | {vs_ff} |", file=out)
            others = [(b["name"], left)]
            if ff and ff is not b:
                others.append(("first-fit+bsp", ff_left))
            for label, rest in others:
                if rest:
                    cells = "; ".join(f"seed {s}: {num(x)} vs {num(y)}" for s, x, y in rest)
                    print(f"| {who} {claim} | {d['workload']}: {len(rest)} {'seed' if len(rest) == 1 else 'seeds'} without a ratio ({label} zero or not a number) | {label} | {name} vs {label}: {cells} | |", file=out)


def self_test():
    """A zero baseline on one seed: the row pairs 2 of 3 seeds and the
    seed gets its own line."""
    import io
    import os
    import tempfile

    def pol(name, xs, baseline=False):
        return {"name": name, "baseline": baseline,
                "runs": [{"seed": s, "avg_tta_s": x, "avg_jct_s": x, "straggler_worker_iterations": x} for s, x in xs]}
    d = {"workload": "w", "policies": [pol("sas", [(1, 90), (2, 50), (3, 80)]),
                                       pol("first-fit+bsp", [(1, 100), (2, 0), (3, 100)], True)]}
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "summary.json")
        with open(p, "w") as f:
            json.dump(d, f)
        buf = io.StringIO()
        table([p], buf)
    out = buf.getvalue()
    want = [
        "| SAS -45% avg JCT | w (2 of 3 seeds paired) | first-fit+bsp | -15.0% ± 63.5 | -15.0% ± 63.5 (2 seeds) |",
        "| SAS -45% avg JCT | w: 1 seed without a ratio (first-fit+bsp zero or not a number) | first-fit+bsp | sas vs first-fit+bsp: seed 2: 50 vs 0 | |",
    ]
    lines = out.splitlines()
    for w in want:
        if lines.count(w) != 1:
            raise SystemExit(f"claims self-test: want line once\n{w}\nin\n{out}")
    print("claims self-test: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        table(sys.argv[1:])
