#!/usr/bin/env bash
# Issue 34's "Speed": SplitwiseSim and Drover replay the same trace window,
# side by side, whole commands, alternating.
#
# Usage: scripts/splitwise/speed.sh SPLITWISE_SRC TRACE.csv OUT.csv [REPS] [CONFIGS]
#
#   TRACE.csv  a trace in SplitwiseSim's format (reference.sh writes
#              traces/azure_conv_10min.csv, the first 10 minutes of the conv
#              trace, 2,867 requests)
#   OUT.csv    config,sim,rep,wall_s,cpu_s: one row per run
#   REPS       rounds (default 3); each round runs, per config, SplitwiseSim
#              once (run.sh, the whole simulator command), then Drover's
#              replay (replay/: the simulator alone, reading SplitwiseSim's
#              inputs and writing every request's outcome) 20 times, then
#              the whole CLI, drover infer sim --results, 20 times (both
#              built here)
#   CONFIGS    default "baseline_h100 splitwise_ha"
#
# CPU time is user + sys of each whole command from wait4 (timecmd.py),
# wall time around it. Prints each config's medians and the ratios.
set -euo pipefail
if [ $# -lt 3 ]; then awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; fi
src=$(cd "$1" && pwd); trace=$(realpath "$2"); out=$(realpath -m "$3"); reps=${4:-3}
configs=${5:-"baseline_h100 splitwise_ha"}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
perf=$root/../shared/traces/llm/calibration/splitwise_perf_model.csv
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/replay" ./scripts/splitwise/replay && go build -o "$tmp/drover" ./cmd/drover)
echo "config,sim,rep,wall_s,cpu_s" > "$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), drover $(git -C "$root" rev-parse --short HEAD)" >&2
for rep in $(seq 1 "$reps"); do
	for c in $configs; do
		/usr/bin/python3 "$here/timecmd.py" 1 "$here/run.sh" "$src" "$c" "$trace" "$tmp/run-$c" 2>/dev/null |
			sed "s/^/$c,splitwisesim,$rep,/" >> "$out"
		/usr/bin/python3 "$here/timecmd.py" 20 "$tmp/replay" -perf "$perf" -trace "$trace" -config "$c" -out "$tmp/drover-$c.csv" |
			sed "s/^/$c,drover,$rep,/" >> "$out"
		/usr/bin/python3 "$here/timecmd.py" 20 "$tmp/drover" infer sim -format splitwise -trace "$trace" -perf "$perf" \
			-cluster "$(echo "$c" | sed 's/baseline_h100/splitwise-baseline/; s/splitwise_ha/splitwise-ha/')" -results "$tmp/cli-$c.csv" |
			sed "s/^/$c,drover-cli,$rep,/" >> "$out"
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for c in dict.fromkeys(r["config"] for r in rows):
    m = {}
    for sim in ("splitwisesim", "drover", "drover-cli"):
        rs = [r for r in rows if r["config"] == c and r["sim"] == sim]
        m[sim] = {k: statistics.median(float(r[k]) for r in rs) for k in ("wall_s", "cpu_s")}
        m[sim]["n"] = len(rs)
    s = m["splitwisesim"]
    print("%s: SplitwiseSim %.2f s CPU, %.2f s wall (median of %d)" % (c, s["cpu_s"], s["wall_s"], s["n"]))
    for sim, what in (("drover", "Drover's replay"), ("drover-cli", "drover infer sim")):
        d = m[sim]
        print("  %s: %.2f ms CPU, %.2f ms wall (median of %d); CPU %.0fx, wall %.0fx"
              % (what, 1000 * d["cpu_s"], 1000 * d["wall_s"], d["n"], s["cpu_s"] / d["cpu_s"], s["wall_s"] / d["wall_s"]))
PY
