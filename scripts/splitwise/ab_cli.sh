#!/usr/bin/env bash
# Two builds of drover side by side on drover infer sim's whole command:
# per round, trace and preset, A N times then B N times, alternating; CPU
# (user + sys, wait4), wall time and peak RSS of each run, and whether the
# two wrote the same bytes (the --results CSV, and the printed summary but
# its "simulated ... in" timing line).
#
# Usage: scripts/splitwise/ab_cli.sh A_BIN B_BIN OUT.csv ROUNDS N TRACE.csv...
#
#   A_BIN, B_BIN  drover binaries (go build -o ... ./cmd/drover at the two
#                 commits)
#   TRACE.csv     SplitwiseSim traces (reference.sh writes them), replayed
#                 with --format splitwise on splitwise-baseline and
#                 splitwise-ha
#   OUT.csv       trace,cluster,bin,rep,wall_s,cpu_s,maxrss_kb: one row per run
#
# The peak RSS is wait4's, which counts the forking Python's own before the
# exec (about 14 MB here): a floor under small commands; /usr/bin/time -f %M
# gives the command's alone.
set -euo pipefail
if [ $# -lt 6 ]; then awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; fi
a=$(realpath "$1"); b=$(realpath "$2"); out=$(realpath -m "$3"); rounds=$4; n=$5; shift 5
here=$(cd "$(dirname "$0")" && pwd)
perf=$here/../../../shared/traces/llm/calibration/splitwise_perf_model.csv
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "trace,cluster,bin,rep,wall_s,cpu_s,maxrss_kb" > "$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq 1 "$rounds"); do
	for trace in "$@"; do
		t=$(basename "$trace" .csv)
		for c in splitwise-baseline splitwise-ha; do
			for x in a b; do
				bin=$a; [ $x = b ] && bin=$b
				args=(infer sim -format splitwise -trace "$trace" -perf "$perf" -cluster "$c" -results "$tmp/$x.csv")
				/usr/bin/python3 - "$n" "$bin" "${args[@]}" <<'PY' | sed "s/^/$t,$c,$x,$rep,/" >> "$out"
import os, subprocess, sys, time
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter()
    p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit("ab_cli: %s exited with status %d" % (sys.argv[2], status))
    print("%.6f,%.6f,%d" % (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss), flush=True)
PY
				"$bin" "${args[@]}" | grep -v '^simulated ' > "$tmp/$x.sum"
			done
			cmp -s "$tmp/a.csv" "$tmp/b.csv" && cmp -s "$tmp/a.sum" "$tmp/b.sum" ||
				{ echo "$t $c: A and B wrote different outputs" >&2; exit 1; }
		done
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for k in dict.fromkeys((r["trace"], r["cluster"]) for r in rows):
    m = {}
    for x in ("a", "b"):
        rs = [r for r in rows if (r["trace"], r["cluster"]) == k and r["bin"] == x]
        cpu = [1000 * float(r["cpu_s"]) for r in rs]
        rss = [int(r["maxrss_kb"]) / 1024 for r in rs]
        m[x] = (statistics.median(cpu), min(cpu), max(cpu), len(cpu), statistics.median(rss))
    print("%s %s: A %.2f ms CPU (median of %d, %.2f-%.2f), %.1f MB RSS; B %.2f ms (%.2f-%.2f), %.1f MB; B/A %.3f; outputs byte-identical"
          % (k[0], k[1], m["a"][0], m["a"][3], m["a"][1], m["a"][2], m["a"][4], m["b"][0], m["b"][1], m["b"][2], m["b"][4], m["b"][0] / m["a"][0]))
PY
