#!/usr/bin/env bash
# Whole-command speed of `drover sim` against the Pollux simulator (OSDI'21
# artifact: petuum/adaptdl, branch osdi21-artifact, simulator/), side by
# side on one Pollux workload and policy, both pinned to one core.
#
# Usage: scripts/bench_pollux.sh POLLUX_SIMULATOR_DIR [ROUNDS]   (default 5)
#
#   POLLUX_SIMULATOR_DIR  the simulator/ directory of a checkout of
#                         petuum/adaptdl at osdi21-artifact (this script
#                         neither fetches nor copies it)
#
# Environment (all optional):
#   WORKLOAD=6            Pollux workload number (workloads/workload-N.csv)
#   POLICY=tiresias       tiresias or optimus (both simulators' names)
#   CPU=1                 the core both are pinned to (taskset -c)
#   DROVER=path           a drover binary; default: go build ./cmd/drover
#   PYTHON=/usr/bin/python3
#   POLLUX_PYTHONPATH=dir extra PYTHONPATH for the simulator's dependencies
#   DROVER_RUNS=20        drover runs per round (one Pollux run per round)
#
# The Pollux simulator needs numpy, pandas and scipy (Debian:
# apt-get install python3-numpy python3-pandas python3-scipy) and autograd
# (goodput.py fits every job's throughput model with autograd.grad, under
# any policy); autograd is pure Python (github.com/HIPS/autograd: put its
# autograd/ package in a directory on POLLUX_PYTHONPATH). Its pollux.py
# imports pymoo at module level, which only the Pollux policy calls; when
# pymoo is missing this script puts stand-ins for the imported names in a
# temporary directory (they raise if called, which Tiresias and Optimus
# never do).
#
# Each round runs the Pollux simulator once, then drover sim DROVER_RUNS
# times on the same workload file (the Drover copy under
# ../shared/traces/philly/pollux_workloads, checked equal to the
# simulator's), alternating, so load on the machine hits both alike. Times
# are per run: CPU (user+sys of the child, from getrusage) and wall, with
# GOMAXPROCS=1 and one BLAS/OpenMP thread. It prints each round's medians
# and ratio, then the medians over rounds, the floor of a Go process
# (drover version: runtime start-up and package initialization, no
# simulation), both simulators' average JCT (they must agree; the Pollux
# published figure for Tiresias on workload 6 is 3469.69 s), and, if
# hyperfine is installed, its own (not interleaved) measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
pdir=$(cd "$1" && pwd)
rounds=${2:-5}
workload=${WORKLOAD:-6}
policy=${POLICY:-tiresias}
cpu=${CPU:-1}
py=${PYTHON:-/usr/bin/python3}
druns=${DROVER_RUNS:-20}
[ -f "$pdir/simulator.py" ] || { echo "bench_pollux: no simulator.py in $pdir" >&2; exit 1; }
wl="$pdir/workloads/workload-$workload.csv"
dwl=../shared/traces/philly/pollux_workloads/workload-$workload.csv
[ -f "$dwl" ] || dwl=$wl
if ! cmp -s "$wl" "$dwl"; then
  echo "bench_pollux: $dwl differs from $wl" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
drover=${DROVER:-}
if [ -z "$drover" ]; then
  go build -o "$tmp/drover" ./cmd/drover
  drover=$tmp/drover
fi
pp=${POLLUX_PYTHONPATH:-}
if ! PYTHONPATH=$pp "$py" -c 'import pymoo' 2>/dev/null; then
  # Stand-ins for the pymoo names pollux.py imports (only PolluxPolicy uses them).
  for d in model algorithms operators/crossover util/nds; do mkdir -p "$tmp/stub/pymoo/$d"; done
  for f in __init__ model/__init__ algorithms/__init__ operators/__init__ operators/crossover/__init__ util/__init__ util/nds/__init__; do
    : >"$tmp/stub/pymoo/$f.py"
  done
  stub='    def __init__(self, *args, **kwargs):\n        raise NotImplementedError("pymoo stand-in (scripts/bench_pollux.sh)")\n'
  for m in model/crossover:Crossover model/mutation:Mutation model/problem:Problem model/repair:Repair \
    algorithms/nsga2:NSGA2 util/nds/non_dominated_sorting:NonDominatedSorting; do
    printf "class %s:\n$stub" "${m#*:}" >"$tmp/stub/pymoo/${m%:*}.py"
  done
  printf 'def minimize(*args, **kwargs):\n    raise NotImplementedError("pymoo stand-in")\n' >"$tmp/stub/pymoo/optimize.py"
  printf 'def crossover_mask(*args, **kwargs):\n    raise NotImplementedError("pymoo stand-in")\n' >"$tmp/stub/pymoo/operators/crossover/util.py"
  pp=${pp:+$pp:}$tmp/stub
fi
PYTHONPATH=$pp "$py" -c 'import numpy, pandas, scipy, autograd' || {
  echo "bench_pollux: $py cannot import numpy, pandas, scipy and autograd (see the header of $0)" >&2
  exit 1
}
echo "# $(date -u +%FT%TZ), load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $("$drover" version | head -1), $(go version | cut -d' ' -f3); $("$py" --version), $(PYTHONPATH=$pp "$py" -c 'import numpy, pandas, scipy; print("numpy", numpy.__version__, "pandas", pandas.__version__, "scipy", scipy.__version__)')"
echo "# workload $workload, policy $policy, 16 nodes x 4 GPUs, 60 s interval; core $cpu; $rounds rounds of 1 Pollux run and $druns drover runs"
export GOMAXPROCS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=$pp
taskset -c "$cpu" "$py" - "$pdir" "$wl" "$drover" "$dwl" "$policy" "$rounds" "$druns" <<'EOF'
import json, os, re, resource, statistics, subprocess, sys, time
pdir, wl, drover, dwl, policy, rounds, druns = sys.argv[1:]
rounds, druns = int(rounds), int(druns)

def timed(cmd, cwd=None):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"bench_pollux: {cmd} exited {p.returncode}")
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, wall, p.stdout

pcmd = [sys.executable, "simulator.py", "--policy", policy, wl]
dcmd = [drover, "sim", "--quiet", "--json", "--workload", dwl, "--policy", policy]
vcmd = [drover, "version"]
med = statistics.median
P, D, V = [], [], []
pjct = djct = None
for r in range(rounds):
    cpu, wall, out = timed(pcmd, cwd=pdir)
    pjct = float(re.findall(r"Average JCT: ([0-9.]+)", out)[-1])
    P.append((cpu, wall))
    d = []
    for _ in range(druns):
        cpu, wall, out = timed(dcmd)
        d.append((cpu, wall))
        djct = json.loads(out)["avg_jct_s"]
        V.append(timed(vcmd)[:2])
    D.extend(d)
    dc, dw = med(x[0] for x in d), med(x[1] for x in d)
    print(f"round {r+1}: pollux {P[-1][0]:.2f} s CPU, {P[-1][1]:.2f} s wall; drover {1e3*dc:.1f} ms CPU, {1e3*dw:.1f} ms wall (median of {druns}); ratio {P[-1][0]/dc:.0f}x CPU, {P[-1][1]/dw:.0f}x wall", flush=True)
pc, pw = med(x[0] for x in P), med(x[1] for x in P)
dc, dw = med(x[0] for x in D), med(x[1] for x in D)
vc, vw = med(x[0] for x in V), med(x[1] for x in V)
print(f"pollux simulator: {pc:.2f} s CPU (range {min(x[0] for x in P):.2f}-{max(x[0] for x in P):.2f}), {pw:.2f} s wall (range {min(x[1] for x in P):.2f}-{max(x[1] for x in P):.2f})")
print(f"drover sim:       {1e3*dc:.1f} ms CPU (range {1e3*min(x[0] for x in D):.1f}-{1e3*max(x[0] for x in D):.1f}), {1e3*dw:.1f} ms wall (range {1e3*min(x[1] for x in D):.1f}-{1e3*max(x[1] for x in D):.1f})")
print(f"drover version:   {1e3*vc:.1f} ms CPU, {1e3*vw:.1f} ms wall (the Go process floor: start-up and package init, no simulation)")
print(f"ratio (medians):  {pc/dc:.0f}x CPU, {pw/dw:.0f}x wall; against the floor alone {pc/vc:.0f}x CPU, {pw/vw:.0f}x wall")
print(f"average JCT:      pollux {pjct:.5f} s, drover {djct:.5f} s")
EOF
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v hyperfine >/dev/null; then
  echo "# hyperfine (each command's runs back to back, not interleaved):"
  (cd "$pdir" && taskset -c "$cpu" hyperfine -N --style basic --runs 3 "$py simulator.py --policy $policy $wl" 2>&1 | grep -E 'Time|Range')
  taskset -c "$cpu" hyperfine -N --style basic --warmup 3 --runs 50 "$drover sim --quiet --workload $dwl --policy $policy" "$drover version" 2>&1 | grep -E 'Benchmark|Time|Range'
fi
