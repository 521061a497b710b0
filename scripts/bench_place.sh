#!/usr/bin/env bash
# bench_place.sh: drover bench place (the open-loop load generator,
# internal/loadgen) against drover serve, each pinned to its own core: the
# server on core 0 with GOMAXPROCS=1, the generator on core 1. For the
# stateful default server and for -stateless, each without and with the
# decision log (-log-dir), it runs every rate in RATES for DURATION after a
# WARMUP, on one server per configuration, through each listener in
# LISTENERS (fast: -place-addr, the lean endpoint for the hot calls; grpc:
# -addr, grpc-go's server), and prints a table: latency from
# the requests' intended send times (coordinated omission counted),
# p50/p90/p99/p99.9/max, the achieved rate, errors, the server's CPU per
# request and cores, its peak RSS, and the generator's own CPU per request
# and send lag p99 (when these are large, the generator limited the run);
# it draws the top rate's latency tails in one PNG (drover bench plot).
#
# Environment: RATES (default "1000 5000 10000"), DURATION (10s), WARMUP
# (2s), CONNS (2), CONCURRENCY (64), CLIENT (h2: the lean HTTP/2 client;
# grpc: grpc-go's, several times the generator's CPU per request), MODES ("stateful stateless"), LOGS
# ("off on"), LISTENERS ("fast grpc"), FLOOR (1: also drive the server's health check, an empty
# call with no Drover code on its path, at the top rate: the floor that
# gRPC, the generator and the machine set; 0: not), PORT (50081), FPORT (50082), MPORT (9481), DROVER (a drover binary to
# measure instead of building this checkout's), OUT (a directory for the
# JSON reports and the server's output; default a temporary one), PIN (1:
# taskset; 0: no pinning), NICE (e.g. -10: run the server and the
# generator at that nice value, so that other processes on a shared
# machine take less of their cores; empty: as started). Needs jq, taskset
# and curl. It is a benchmark: it prints figures and judges nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

RATES=${RATES:-"1000 5000 10000"}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-2}
CONCURRENCY=${CONCURRENCY:-64}
CLIENT=${CLIENT:-h2}
MODES=${MODES:-"stateful stateless"}
LOGS=${LOGS:-"off on"}
LISTENERS=${LISTENERS:-"fast grpc"}
FLOOR=${FLOOR:-1}
PORT=${PORT:-50081}
FPORT=${FPORT:-50082}
MPORT=${MPORT:-9481}
PIN=${PIN:-1}
OUT=${OUT:-$(mktemp -d /tmp/bench_place.XXXXXX)}
mkdir -p "$OUT"

for t in jq taskset curl; do command -v $t >/dev/null || { echo "need $t" >&2; exit 2; }; done
srv_cpu=() gen_cpu=()
if [ -n "${NICE:-}" ]; then
	srv_cpu=(nice -n "$NICE")
	gen_cpu=(nice -n "$NICE")
fi
if [ "$PIN" = 1 ]; then
	[ "$(nproc)" -ge 2 ] || { echo "pinning needs 2 CPUs (PIN=0 to run unpinned)" >&2; exit 2; }
	srv_cpu+=(taskset -c 0)
	gen_cpu+=(taskset -c 1)
fi

if [ -n "${DROVER:-}" ]; then
	cp "$DROVER" "$OUT/drover"
else
	go build -o "$OUT/drover" ./cmd/drover
fi

if [ -n "${DROVER:-}" ]; then
	what="binary $DROVER"
else
	what="commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+uncommitted changes')"
fi
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ)  $what  $(nproc) CPUs  loadavg $(cut -d' ' -f1-3 /proc/loadavg)  $(go version 2>/dev/null | cut -d' ' -f3)"
echo "# server: ${srv_cpu[*]:-unpinned} GOMAXPROCS=1; generator: ${gen_cpu[*]:-unpinned}; $CLIENT client, $CONNS connections, $CONCURRENCY in-flight slots; $DURATION per rate after $WARMUP warm-up; 64-node, 8-worker Place"

answers=
SRV_PID=
start_server() { # extra flags...
	(
		export GOMAXPROCS=1
		exec "${srv_cpu[@]}" "$OUT/drover" serve -addr 127.0.0.1:$PORT -place-addr 127.0.0.1:$FPORT -metrics-addr 127.0.0.1:$MPORT "$@"
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

# place_hist LISTENER prints the server's own count of Place calls answered
# through LISTENER (grpc or fast) within 1 ms and of all of them
# (drover_grpc_request_duration_seconds).
place_hist() {
	curl -sf "http://127.0.0.1:$MPORT/metrics" | awk -v l="$1" '
		index($0, "drover_grpc_request_duration_seconds_bucket{listener=\"" l "\",method=\"/drover.v1.Scheduler/Place\",le=\"0.001\"} ") == 1 {a=$2}
		index($0, "drover_grpc_request_duration_seconds_count{listener=\"" l "\",method=\"/drover.v1.Scheduler/Place\"} ") == 1 {n=$2}
		END {printf "%d %d", a, n}'
}

printf '%-9s %-3s %-4s %-6s %6s %8s %7s %7s %7s %7s %7s %6s %9s %6s %8s %9s %8s %7s\n' \
	server log via call asked reached p50_ms p90_ms p99_ms p99.9ms max_ms errors srv_us/req srv_cores srv_rss_MiB srv_le1ms% gen_us/req lag_p99
for mode in $MODES; do
	for log in $LOGS; do
		flags=()
		[ "$mode" = stateless ] && flags+=(-stateless)
		if [ "$log" = on ]; then
			rm -rf "$OUT/log-$mode"
			flags+=(-log-dir "$OUT/log-$mode")
		fi
		start_server "${flags[@]}"
		top=
		for rate in $RATES; do top=$rate; done
		runs=()
		for via in $LISTENERS; do
			for rate in $RATES; do runs+=("$via place $rate"); done
			[ "$FLOOR" = 1 ] && runs+=("$via health $top")
		done
		for run in "${runs[@]}"; do
			read -r via call rate <<<"$run"
			name="$mode-log$log-$via-$call-$rate"
			port=$PORT
			[ "$via" = fast ] && port=$FPORT
			extra=()
			[ "$call" = health ] && extra=(-health)
			h0=$(place_hist "$via")
			"${gen_cpu[@]}" "$OUT/drover" bench place -addr 127.0.0.1:$port -rate "$rate" -duration "$DURATION" -warmup "$WARMUP" \
				-conns "$CONNS" -concurrency "$CONCURRENCY" -client "$CLIENT" -server-pid "$SRV_PID" -json "${extra[@]}" >"$OUT/$name.json"
			# The measured run's share of Place calls within 1 ms inside the
			# server: the difference of the counts after and before
			# (warm-up included; "-" for the health check).
			le1=$(echo "$h0 $(place_hist "$via")" | awk '{ if ($4 > $2) printf "%.2f", 100 * ($3 - $1) / ($4 - $2); else printf "-" }')
			jq -r --arg mode "$mode" --arg log "$log" --arg via "$via" --arg call "$call" --arg le1 "$le1" '
				def f(x): x * 1000 | round / 1000;
				[$mode, $log, $via, $call, .rate, (.achieved_rate | round), f(.latency.p50_ms), f(.latency.p90_ms), f(.latency.p99_ms),
				 f(.latency["p99.9_ms"]), f(.latency.max_ms), ([.errors[]] | add // 0),
				 (.server.cpu_us_per_request * 10 | round / 10), (.server.cores * 100 | round / 100), (.server.peak_rss_mib * 10 | round / 10),
				 $le1, (.client_cpu_us_per_request * 10 | round / 10), f(.lag.p99_ms)]
				| @tsv' "$OUT/$name.json" |
				awk -F'\t' '{printf "%-9s %-3s %-4s %-6s %6s %8s %7s %7s %7s %7s %7s %6s %9s %6s %8s %9s %8s %7s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18}'
		done
		for via in $LISTENERS; do
			answers+="#   $mode, log $log, $via: $(jq -r .answer "$OUT/$mode-log$log-$via-place-$top.json")"$'\n'
		done
		stop_server
	done
done
printf '# answers (the first, decoded):\n%s' "$answers"
# One figure of the top rate's latency tails (every configuration, and
# the floor): the fraction of calls slower than each latency, log-log.
for rate in $RATES; do top=$rate; done
"$OUT/drover" bench plot -title "drover bench place at $top/s: latency tail" -o "$OUT/tail-$top.png" "$OUT"/*-"$top".json >/dev/null
echo "# loadavg $(cut -d' ' -f1-3 /proc/loadavg) at the end; reports in $OUT; latency tails at $top/s in $OUT/tail-$top.png"
