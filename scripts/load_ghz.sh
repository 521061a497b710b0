#!/usr/bin/env bash
# Load test of `drover serve` with ghz on loopback (issue 5's load point):
# Place for one 8-worker job on a 64-node cluster (drover place -nodes 64
# -workers 8 -print-request), at RATE/s (default 10,000), then at 10x
# overload on a fresh server writing the decision log. It prints
#   - ghz's throughput, p50/p90/p99 latency and status codes,
#   - the same figures for the floor: grpc.health.v1 Check, the cheapest
#     call the server answers, at the same rate (what ghz and the machine
#     allow whatever Place costs),
#   - the CPU time per request of the server and of ghz (utime+stime from
#     /proc and /usr/bin/time: what each process used, whatever else runs;
#     other load still inflates it through shared caches and scheduling),
#   - go_goroutines before and two seconds after the overload run,
#   - the decision records in the log (drover eval --log) against ghz's
#     count of OK answers.
# ghz runs with --disable-template-functions --disable-template-data: its
# default builds a template with ~200 functions per call, about 60 us of
# ghz CPU per request.
#
#   go install github.com/bojand/ghz/cmd/ghz@v0.120.0
#   scripts/load_ghz.sh                 # the whole measurement (about 1 min)
#   RATE=5000 N=50000 scripts/load_ghz.sh
#
# Settings (environment): RATE (10000), N (requests at RATE, 150000),
# C (ghz workers, 50), CONNS (ghz connections, 2), OVER_N (requests in the
# overload run, 300000), OVER_C (200), PIN (0: no pinning; 1: server on CPU
# 0 and ghz on CPU 1 with taskset, which caps ghz at one core, too little
# for 10k/s), SRV_GOMAXPROCS (the server's GOMAXPROCS; default 1, one P
# answers 10k/s with less scheduler overhead than two; empty: Go's
# default), SRV_GOGC (the server's GOGC; default drover serve's -gogc),
# GHZ (ghz's path), PORT (50071), MPORT (9471), DROVER (a drover binary to
# measure instead of building this checkout's), SKIP_OVERLOAD (1: the
# target rate only), OUT (a directory for the JSON reports, the server's
# output and the log; default a temporary one). It is a benchmark: it
# prints figures and judges only the overload checks (exit status 1 when a
# record is lost or goroutines leak).
set -euo pipefail
cd "$(dirname "$0")/.."

RATE=${RATE:-10000}
N=${N:-150000}
C=${C:-50}
CONNS=${CONNS:-2}
OVER_N=${OVER_N:-300000}
OVER_C=${OVER_C:-200}
SRV_GOMAXPROCS=${SRV_GOMAXPROCS-1}
PIN=${PIN:-0}
PORT=${PORT:-50071}
MPORT=${MPORT:-9471}
GHZ=${GHZ:-$(command -v ghz || echo "$(go env GOPATH)/bin/ghz")}
OUT=${OUT:-$(mktemp -d /tmp/load_ghz.XXXXXX)}
mkdir -p "$OUT"

[ -x "$GHZ" ] || { echo "ghz not found: go install github.com/bojand/ghz/cmd/ghz@v0.120.0" >&2; exit 2; }
for t in jq taskset; do command -v $t >/dev/null || { echo "need $t" >&2; exit 2; }; done

srv_cpu=() ghz_cpu=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ]; then
	srv_cpu=(taskset -c 0)
	ghz_cpu=(taskset -c 1)
fi

if [ -n "${DROVER:-}" ]; then
	cp "$DROVER" "$OUT/drover"
else
	go build -o "$OUT/drover" ./cmd/drover
fi
"$OUT/drover" place -nodes 64 -workers 8 -print-request >"$OUT/place64.json"

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(nproc) CPUs  loadavg $(cut -d' ' -f1-3 /proc/loadavg)  $("$GHZ" --version 2>&1 | head -1)"
echo "# pinning: ${srv_cpu[*]:-none} (server)  ${ghz_cpu[*]:-none} (ghz); server GOMAXPROCS ${SRV_GOMAXPROCS:-default}, GOGC ${SRV_GOGC:-default}"

SRV_PID=
start_server() { # extra flags...
	(
		[ -z "$SRV_GOMAXPROCS" ] || export GOMAXPROCS=$SRV_GOMAXPROCS
		[ -z "${SRV_GOGC:-}" ] || export GOGC=$SRV_GOGC
		exec "${srv_cpu[@]}" "$OUT/drover" serve -addr 127.0.0.1:$PORT -metrics-addr 127.0.0.1:$MPORT "$@"
	) >>"$OUT/serve.log" 2>&1 &
	SRV_PID=$!
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$MPORT/metrics" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "server did not start; see $OUT/serve.log" >&2
	exit 1
}
stop_server() {
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" 2>/dev/null || true
	SRV_PID=
}
trap stop_server EXIT

# cpu_ticks prints the server's utime+stime in clock ticks.
cpu_ticks() { awk '{print $14+$15}' "/proc/$SRV_PID/stat"; }
metric() { curl -sf "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1==m {print $2}'; }

# run NAME RPS N C [CALL ARGS...]: one ghz run; prints its figures and the
# server's CPU. The call is Place with the 64-node request unless CALL ARGS
# name another.
run() {
	local name=$1 rps=$2 n=$3 c=$4 t0 t1 wall0 wall1
	shift 4
	local call=("$@")
	[ ${#call[@]} -gt 0 ] || call=(--proto serve/proto/drover.proto --call drover.v1.Scheduler.Place -D "$OUT/place64.json")
	t0=$(cpu_ticks)
	wall0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$OUT/$name.time" "${ghz_cpu[@]}" "$GHZ" --insecure "${call[@]}" \
		--disable-template-functions --disable-template-data --rps "$rps" -c "$c" --connections "$CONNS" -n "$n" \
		--timeout 5s -O json -o "$OUT/$name.json" 127.0.0.1:$PORT || true
	wall1=$(date +%s.%N)
	t1=$(cpu_ticks)
	local tck ok
	tck=$(getconf CLK_TCK)
	ok=$(jq '.statusCodeDistribution.OK // 0' "$OUT/$name.json")
	jq -r --arg name "$name" --argjson rps "$rps" --argjson c "$c" --argjson conns "$CONNS" '
		def ms(p): ((.latencyDistribution // [] | map(select(.percentage == p)) | .[0].latency // 0) / 1e6);
		"\($name): asked \($rps)/s, -c \($c), \($conns) connections: \(.count) requests, reached \(.rps | floor)/s, " +
		"p50 \(ms(50) * 1000 | round / 1000) ms, p90 \(ms(90) * 1000 | round / 1000) ms, p99 \(ms(99) * 1000 | round / 1000) ms, " +
		"statuses \(.statusCodeDistribution // {} | tostring)"' "$OUT/$name.json"
	awk -v a="$t0" -v b="$t1" -v tck="$tck" -v n="$(jq .count "$OUT/$name.json")" -v w0="$wall0" -v w1="$wall1" \
		-v g="$(cat "$OUT/$name.time" | tail -1)" 'BEGIN {
		split(g, x, " "); s = (b - a) / tck; w = w1 - w0
		printf "  server CPU %.2f s = %.1f us/request (%.2f cores); ghz CPU %.2f s = %.1f us/request (%.2f cores); wall %.1f s\n",
			s, 1e6 * s / n, s / w, x[1] + x[2], 1e6 * (x[1] + x[2]) / n, (x[1] + x[2]) / w, w }'
	LAST_OK=$ok
}

# 1. The target rate, after a warm-up.
start_server
run warmup 2000 10000 10 >/dev/null
run target "$RATE" "$N" "$C"
echo "  server-side: $(curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '/^drover_grpc_request_duration_seconds_bucket\{method="\/drover.v1.Scheduler\/Place",le="0.001"\}/ {a=$2} /^drover_grpc_request_duration_seconds_count\{method="\/drover.v1.Scheduler\/Place"\}/ {n=$2} END {if (n) printf "%.2f%% of requests <= 1 ms inside the server", 100*a/n}')"
# The floor: the cheapest call the server has (grpc.health.v1 Check, an
# empty request and a constant answer; ghz finds it by reflection) at the
# same rate and concurrency. What this run's p99 shows is ghz and the
# machine, not Place.
run floor "$RATE" "$N" "$C" --call grpc.health.v1.Health.Check -d '{}'
stop_server

[ "${SKIP_OVERLOAD:-0}" = 1 ] && exit 0

# 2. 10x overload, with the decision log, on a fresh server.
rm -rf "$OUT/log"
start_server -log-dir "$OUT/log"
sleep 0.5
g0=$(metric go_goroutines)
run overload $((10 * RATE)) "$OVER_N" "$OVER_C"
over_ok=$LAST_OK
sleep 2
g1=$(metric go_goroutines)
decisions=$(curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '/^drover_decisions_total/ {s += $2} END {print s+0}')
echo "  decisions by fallback: $(curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '/^drover_decisions_total/ {match($0, /fallback="[^"]*"/); printf "%s=%s ", substr($0, RSTART+9, RLENGTH-9), $2}')"
echo "  goroutines: $g0 before, $g1 two seconds after the run"
stop_server
logged=$("$OUT/drover" eval --log "$OUT/log" | awk '/^records/ {gsub(/\(/, "", $3); print $3}')
echo "  decision log: $logged decision records; ghz OK answers $over_ok; server decisions counted $decisions"

status=0
if [ "$logged" != "$over_ok" ]; then echo "FAIL: log records $logged != OK answers $over_ok"; status=1; fi
if [ "$g1" -gt "$g0" ]; then echo "FAIL: goroutines $g0 -> $g1"; status=1; fi
[ $status = 0 ] && echo "overload: kept answering, no record lost, goroutines back to baseline"
echo "# reports in $OUT"
exit $status
