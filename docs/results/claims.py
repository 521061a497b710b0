#!/usr/bin/env python3
"""Builds the claims table of docs/results/claims.md from drover eval's
summary.json files (one per workload, run with the default contender set):
for STRN's and SAS's claims, Drover's figure against the best baseline,
paired over seeds with a 95% t-interval.

    python3 docs/results/claims.py docs/results/eval-*/summary.json
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


def paired(a, b):
    """Mean and 95% half-width of a_i / b_i - 1 over seeds."""
    xs = [x / y - 1 for x, y in zip(a, b) if y > 0]
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, math.nan
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, t95(n - 1) * sd / math.sqrt(n)


def runs(p, key):
    return [r[key] for r in sorted(p["runs"], key=lambda r: r["seed"])]


def best(pols, key):
    """The baseline with the lowest mean of key."""
    base = [p for p in pols if p.get("baseline")] or [p for p in pols if p["name"] not in ("strn", "sas") and "oracle" not in p["name"]]
    return min(base, key=lambda p: sum(runs(p, key)) / len(p["runs"]))


def fmt(m, h):
    return f"{100 * m:+.1f}% ± {100 * h:.1f}"


claims = [
    ("STRN", "-59% avg TTA", "strn", "avg_tta_s"),
    ("SAS", "-45% avg JCT", "sas", "avg_jct_s"),
    ("SAS", "-63% stragglers", "sas", "straggler_worker_iterations"),
]
print("| claim | workload | best baseline (by that metric) | Drover: method vs best baseline | vs first-fit+bsp |")
print("|---|---|---|---|---|")
for who, claim, name, key in claims:
    for path in sys.argv[1:]:
        d = json.load(open(path))
        pols = d["policies"]
        by = {p["name"]: p for p in pols}
        if name not in by:
            continue
        b = best(pols, key)
        m, h = paired(runs(by[name], key), runs(b, key))
        ff = by.get("first-fit+bsp")
        vs_ff = fmt(*paired(runs(by[name], key), runs(ff, key))) if ff else "-"
        print(f"| {who} {claim} | {d['workload']} ({len(by[name]['runs'])} seeds) | {b['name']} | {fmt(m, h)} | {vs_ff} |")
