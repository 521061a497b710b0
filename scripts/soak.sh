#!/usr/bin/env bash
# soak.sh: issue 32's soak (drover bench soak, serve/soak) with the
# server and the clients pinned to separate cores, as bench_place.sh
# pins them: drover serve on core 0 with GOMAXPROCS=1 (bench soak starts
# it under taskset -c 0), every client (agents, Reports, slowloris, the
# well-behaved Place client, the sampler) on core 1. Arguments go to
# drover bench soak (default: the 10-minute soak; e.g. -duration 1m
# -jobs 2000 for a check of the harness). It prints the run's progress
# and a PASS/FAIL verdict per acceptance point, and exits non-zero when
# one fails; the CSVs, the figure (soak.png) and the server's log go to
# OUT.
#
# Environment: OUT (default a new temporary directory), DROVER (a drover
# binary to measure instead of building this checkout's), PIN (1:
# taskset; 0: no pinning). Needs taskset.
set -euo pipefail
cd "$(dirname "$0")/.."

PIN=${PIN:-1}
OUT=${OUT:-$(mktemp -d /tmp/soak.XXXXXX)}
mkdir -p "$OUT"
if [ -n "${DROVER:-}" ]; then
	cp "$DROVER" "$OUT/drover"
	what="binary $DROVER"
else
	go build -o "$OUT/drover" ./cmd/drover
	what="commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+uncommitted changes')"
fi
echo "# $what  $(nproc) CPUs  $(go version 2>/dev/null | cut -d' ' -f3)"
client=() cpus=(-server-cpus "")
if [ "$PIN" = 1 ]; then
	command -v taskset >/dev/null || { echo "need taskset (PIN=0 to run unpinned)" >&2; exit 2; }
	[ "$(nproc)" -ge 2 ] || { echo "pinning needs 2 CPUs (PIN=0 to run unpinned)" >&2; exit 2; }
	client=(taskset -c 1)
	cpus=(-server-cpus 0)
fi
exec "${client[@]}" "$OUT/drover" bench soak "${cpus[@]}" -out "$OUT" "$@"
