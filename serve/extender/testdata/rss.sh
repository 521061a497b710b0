#!/usr/bin/env bash
# rss.sh DROVER BODY [N]: the peak RSS of `DROVER serve -extender-addr`
# before and after N concurrent POST /filter calls with BODY (issue 18:
# a 31.5 MB body of 240,000 nodes). Linux only (/proc/PID/status).
#
#	python3 -c '...' > /tmp/big.json   # see TestBodyOverNodeCapStopsEarly's nodeJSON
#	serve/extender/testdata/rss.sh ./drover /tmp/big.json 1
#	serve/extender/testdata/rss.sh ./drover /tmp/big.json 3
set -euo pipefail
bin=$1 body=$2 n=${3:-1}
port=$((20000 + RANDOM % 20000))
"$bin" serve -addr 127.0.0.1:0 -metrics-addr "" -stateless -extender-addr 127.0.0.1:$port >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:$port/ && break; sleep 0.1; done
kb() { awk -v k="$1:" '$1==k {print $2}' /proc/$pid/status; }
echo "before: VmRSS $(kb VmRSS) kB, VmHWM $(kb VmHWM) kB"
for _ in $(seq "$n"); do
	curl -s -o /tmp/rss.$$.$RANDOM -w '%{http_code} %{time_total}s\n' -X POST -H 'Content-Type: application/json' --data-binary @"$body" http://127.0.0.1:$port/filter &
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
echo "after $n call(s): VmRSS $(kb VmRSS) kB, VmHWM (peak) $(kb VmHWM) kB"
rm -f /tmp/rss.$$.*
