#!/usr/bin/env bash
# Two builds of Drover's replay (replay/) side by side: per round and
# config, A 20 times then B 20 times, alternating; CPU (user + sys, wait4)
# and wall time of each whole command, and whether the two wrote the same
# bytes (per-request CSV and summary).
#
# Usage: scripts/splitwise/ab.sh A_BIN B_BIN TRACE.csv OUT.csv [ROUNDS] [CONFIGS]
#
#   A_BIN, B_BIN  replay binaries (go build -o ... ./scripts/splitwise/replay
#                 at the two commits)
#   OUT.csv       config,bin,rep,wall_s,cpu_s: one row per run
#   ROUNDS        default 5; CONFIGS default "baseline_h100 splitwise_ha"
set -euo pipefail
if [ $# -lt 4 ]; then awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; fi
a=$(realpath "$1"); b=$(realpath "$2"); trace=$(realpath "$3"); out=$(realpath -m "$4"); rounds=${5:-5}
configs=${6:-"baseline_h100 splitwise_ha"}
here=$(cd "$(dirname "$0")" && pwd)
perf=$here/../../../shared/traces/llm/calibration/splitwise_perf_model.csv
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "config,bin,rep,wall_s,cpu_s" > "$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq 1 "$rounds"); do
	for c in $configs; do
		for x in a b; do
			bin=$a; [ $x = b ] && bin=$b
			/usr/bin/python3 "$here/timecmd.py" 20 "$bin" -perf "$perf" -trace "$trace" -config "$c" -out "$tmp/$x-$c.csv" |
				sed "s/^/$c,$x,$rep,/" >> "$out"
			"$bin" -perf "$perf" -trace "$trace" -config "$c" -out "$tmp/$x-$c.csv" > "$tmp/$x-$c.sum"
		done
		cmp -s "$tmp/a-$c.csv" "$tmp/b-$c.csv" && cmp -s "$tmp/a-$c.sum" "$tmp/b-$c.sum" ||
			{ echo "$c: A and B wrote different outputs" >&2; exit 1; }
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for c in dict.fromkeys(r["config"] for r in rows):
    m = {}
    for x in ("a", "b"):
        cpu = [float(r["cpu_s"]) for r in rows if r["config"] == c and r["bin"] == x]
        m[x] = (statistics.median(cpu), min(cpu), max(cpu), len(cpu))
    print("%s: A %.2f ms CPU (median of %d, %.2f-%.2f), B %.2f ms (%.2f-%.2f); outputs byte-identical"
          % (c, 1000 * m["a"][0], m["a"][3], 1000 * m["a"][1], 1000 * m["a"][2], 1000 * m["b"][0], 1000 * m["b"][1], 1000 * m["b"][2]))
PY
