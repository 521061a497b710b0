#!/bin/bash
# Records runs and re-scores them offline (docs/results/rescoring.md): for
# each server mode (stateful, drover serve's default; -stateless), each
# background load (1, 1.5) and seeds 1-5, a drover serve -log-dir DIR and a
# drover sim --remote --record DIR of the built-in workload, then
# drover eval --log DIR --policies first-fit,strn,sas,checkpoints/sas-rl.
# Prints each run's match line. About 40 s on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o /tmp/drover-rescore ./cmd/drover
out=$(mktemp -d)
port=50800
for mode in stateful stateless; do
	for load in 1 1.5; do
		for seed in 1 2 3 4 5; do
			port=$((port + 1))
			d=$out/$mode-$load-$seed
			serveFlags=() evalFlags=()
			if [ $mode = stateless ]; then serveFlags=(-stateless); evalFlags=(--served-stateless); fi
			/tmp/drover-rescore serve -addr 127.0.0.1:$port -metrics-addr "" -log-dir "$d" "${serveFlags[@]}" > "$d.serve.log" 2>&1 &
			pid=$!
			sleep 1
			/tmp/drover-rescore sim --remote 127.0.0.1:$port --record "$d" --seed $seed --load $load --quiet > "$d.sim.txt"
			kill $pid
			wait $pid || true
			/tmp/drover-rescore eval --log "$d" --policies first-fit,strn,sas,checkpoints/sas-rl "${evalFlags[@]}" \
				--out "$d.eval" --quiet > "$d.eval.txt"
			echo "$mode load=$load seed=$seed $(grep '^match' "$d.eval.txt")"
		done
	done
done
echo "runs and tables in $out"
