#!/usr/bin/env python3
"""The learned-policy table of docs/results/learned.md.

For each workload W it reads DIR/learned-W/summary.json (the direct learned
policies, strn and sas: learned-tables.sh) and DIR/eval-W/summary.json (the
baselines of eval-tables.sh, the same seeds and options), checks that strn's
and sas's runs are the same in both (so the baselines' runs pair with the
learned ones seed by seed), finds sas-rl's teacher (sas+strn-sync) in
learned-W/summary.json or else in learned-W/teacher/summary.json
(learned-teacher.sh; its strn and sas-rl runs must be the stored ones, bit
for bit), and compares each learned policy's average TTA with its own
heuristic, with its teacher (the policy it was cloned from: strn for
strn-rl), gives the teacher's own gain over that heuristic, then compares
with the best heuristic (strn, sas or the teacher, lowest mean),
with the best fixed-sync baseline (lowest mean of first-fit, tiresias and
gandiva with bsp, asp, local(4) or local(8)) and with the best baseline of
eval.md (any of the 16): the mean over seeds of (learned / other - 1) and
the half-width of its 95% t-interval, as drover eval reports. It also gives
each learned policy's mean number of jobs that missed their target (avg TTA
is over the jobs that reached it) and its mean final accuracy.

Every seed is counted: a learned policy's seed without a run of the policy it
is compared with is an error (the comparisons may have more), and a cell
whose ratio leaves out seeds (a zero or unknown figure) says which, with both
figures.

    python3 docs/results/learned.py docs/results [DIR of eval-W]
"""
import json
import math
import re
import sys

WORKLOADS = ["builtin", "philly-late", "helios", "pai"]
# The policy each learned policy is cloned from (policies/direct.TeacherOf).
TEACHER = {"strn-rl": "strn", "sas-rl": "sas+strn-sync"}
FIXED = re.compile(r"^(first-fit|tiresias|gandiva)\+(bsp|asp|local\(4\)|local\(8\))$")
# Two-sided 95% t quantiles by degrees of freedom (19 for 20 seeds).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
       18: 2.101, 19: 2.093, 20: 2.086, 29: 2.045, 39: 2.023}


def num(x):
    return math.nan if x is None else x


def finite(x):
    return not math.isnan(x) and not math.isinf(x)


def tta(p):
    return {r["seed"]: num(r["avg_tta_s"]) for r in p["runs"]}


def col(p, key):
    """The mean over seeds of a run figure, nan where the summary has none."""
    xs = [num(r.get(key)) for r in p["runs"]]
    xs = [x for x in xs if finite(x)]
    return sum(xs) / len(xs) if xs else math.nan


def untimed(p):
    """A policy's runs without their wall-clock times, which vary."""
    return [{k: v for k, v in r.items() if k != "schedule_time_s"} for r in p["runs"]]


def paired(a, b):
    """Mean and 95% half-width of a_s / b_s - 1 over a's seeds where both
    are numbers and b_s > 0, their number, and a's other seeds as (seed,
    a_s, b_s). b must have every seed of a (it may have more: a quick look
    at SEEDS=1-5 pairs with the stored 20-seed baselines)."""
    if set(a) - set(b):
        sys.exit(f"learned: seeds {sorted(set(a) - set(b))} have no run to pair with")
    xs, left = [], []
    for s in sorted(a):
        if finite(a[s]) and finite(b[s]) and b[s] > 0:
            xs.append(a[s] / b[s] - 1)
        else:
            left.append((s, a[s], b[s]))
    n = len(xs)
    if n == 0:
        return float("nan"), float("nan"), 0, left
    m = sum(xs) / n
    if n < 2:
        return m, float("nan"), n, left
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, T95.get(n - 1, 1.96) * sd / math.sqrt(n), n, left


def fmt(m, h):
    if math.isnan(m):
        return "-"
    return f"{100 * m:+.1f} ± {100 * h:.1f}%"


def cell(a, b, bold=False):
    """A paired comparison's cell, saying which seeds it leaves out."""
    m, h, n, left = paired(a, b)
    c = f"**{fmt(m, h)}**" if bold else fmt(m, h)
    if left:
        c += f" ({n} of {n + len(left)} seeds; " + ", ".join(f"seed {s}: {x:g} vs {y:g}" for s, x, y in left) + ")"
    return c


def main(d, based):
    rows, rankings = [], []
    for w in WORKLOADS:
        learned = json.load(open(f"{d}/learned-{w}/summary.json"))
        if learned.get("ranking"):
            rankings.append((w, learned["ranking"]))
        base = json.load(open(f"{based}/eval-{w}/summary.json"))
        lp = {p["name"]: p for p in learned["policies"]}
        bp = {p["name"]: p for p in base["policies"]}
        for h in ("strn", "sas"):
            mine, theirs = tta(lp[h]), tta(bp[h])
            common = set(mine) & set(theirs)
            if not common or any(mine[s] != theirs[s] and not (math.isnan(mine[s]) and math.isnan(theirs[s])) for s in common):
                sys.exit(f"{w}: {h}'s runs differ between learned-{w} and eval-{w}: the baselines do not pair")

        if TEACHER["sas-rl"] not in lp:
            try:
                tp = {p["name"]: p for p in json.load(open(f"{d}/learned-{w}/teacher/summary.json"))["policies"]}
            except FileNotFoundError:
                tp = {}
            if TEACHER["sas-rl"] in tp:
                for n in tp:
                    if n != TEACHER["sas-rl"] and (n not in lp or untimed(lp[n]) != untimed(tp[n])):
                        sys.exit(f"{w}: {n}'s runs differ between learned-{w} and learned-{w}/teacher: the teacher's runs do not pair")
                lp[TEACHER["sas-rl"]] = tp[TEACHER["sas-rl"]]

        def mean(p):
            m = col(p, "avg_tta_s")
            return math.inf if math.isnan(m) else m

        best_h = min((n for n in ("strn", "sas", TEACHER["sas-rl"]) if n in lp), key=lambda n: mean(lp[n]))
        fixed = [n for n in bp if FIXED.match(n)]
        best_f = min(fixed, key=lambda n: mean(bp[n]))
        best_b = (base.get("best_baseline") or {}).get("avg_tta_s")
        for name, p in lp.items():
            if "@" not in name:
                continue
            env = name.split("@")[0]
            own = "strn" if env == "strn-rl" else "sas"
            teacher = TEACHER[env]
            acc = col(p, "avg_accuracy")
            cells = [w, name.split("@")[0], f"{col(p, 'avg_tta_s'):.0f}", "-" if math.isnan(col(p, "missed")) else f"{col(p, 'missed'):.1f}",
                     "-" if math.isnan(acc) else f"{100 * acc:.2f}"]
            cells.append(f"{cell(tta(p), tta(lp[own]))} ({own})")
            if teacher not in lp:
                cells += ["-", "-"]
            elif teacher == own:
                cells += [f"{cell(tta(p), tta(lp[teacher]))} ({teacher})", "(the teacher is the heuristic)"]
            else:
                cells += [f"{cell(tta(p), tta(lp[teacher]), True)} ({teacher})", cell(tta(lp[teacher]), tta(lp[own]), True)]
            for other, src in ((best_h, lp), (best_f, bp)) + (((best_b, bp),) if best_b else ()):
                cells.append(f"{cell(tta(p), tta(src[other]))} ({other})")
            rows.append(cells)
    print("| workload | learned | avg TTA (s) | missed target | final accuracy (%) | vs its heuristic | vs its teacher | its teacher vs the heuristic | vs best heuristic | vs best fixed-sync baseline | vs best baseline |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    for w, r in rankings:
        changed = [b for b, top in zip(r["bands"][1:], r["top"][1:]) if top != r["top"][0]]
        verdict = "holds" if r["holds"] else "does not hold (changes at " + " and ".join(changed) + ")"
        tops = "; ".join(f"{b}: {' > '.join(top)}" for b, top in zip(r["bands"], r["top"]))
        print(f"{w}: ranking of the top three of learned-{w} across the convergence band {verdict}: {tops} (rank: {r['rule']})")
        print()
    print("paired over seeds: mean of (learned / other - 1), and of (teacher / heuristic - 1), ± the half-width of its 95% t-interval; negative is better. avg TTA is over the jobs that reached their target; missed target: the jobs that did not, mean over seeds")


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "docs/results"
    main(d, sys.argv[2] if len(sys.argv) > 2 else d)
