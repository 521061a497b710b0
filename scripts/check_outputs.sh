#!/usr/bin/env bash
# check_outputs.sh: the results a drover binary gives, written to files, so
# that two binaries (before and after a change that must not move results)
# can be compared with diff -r. The commands are a bounded sample of those
# the README and docs/results use, every one with a fixed seed:
#
#   sim    the no-flag default (text); the built-in workload under every
#          policy, job-level and per-worker, with STRET and a sync strategy;
#          Pollux workload 6 (Tiresias, Optimus; the simulator.md fidelity
#          rows); Philly's 82k jobs (first-fit, job-level and per-worker) and
#          Helios on 22 x 8 GPUs; the PAI cluster
#   eval   the built-in workload (4 policies and both shipped checkpoints, 2
#          seeds) and Helios (2 seeds)
#   train  the default (placement, PPO, 100k steps), CartPole (20k steps)
#          and strn-rl (PPO, 4k steps, 1 held-out seed per workload)
#
# What legitimately varies from run to run is left out: wall and CPU times,
# events/s, phases, decision times (jq deletes those keys from the JSON;
# sed drops those lines and the decision-time column from the text), the
# training scalars' wall_time column and charts/SPS rows, TensorBoard
# event files and plots. A run directory's weights are compared by
# SHA-256. Output paths are written as OUT. About 70 s on the project's
# 2-core machine.
#
#   scripts/check_outputs.sh ./drover /tmp/out-new
#   diff -r /tmp/out-old /tmp/out-new
#   scripts/check_outputs.sh -compare /tmp/out-old /tmp/out-new
#
# -compare prints, for each file that differs, how many numbers differ and
# the largest relative difference among them, and how many other tokens
# differ (a changed word, or a number in one file only: then lines moved).
#
# Run from anywhere; the commands run in the repository root, beside
# ../shared/traces. Needs jq.
set -euo pipefail

if [ $# -eq 3 ] && [ "$1" = -compare ]; then
	same=0
	for f in "$2"/*; do
		g="$3/$(basename "$f")"
		if [ ! -f "$g" ]; then echo "$(basename "$f"): missing in $3"; continue; fi
		if cmp -s "$f" "$g"; then same=$((same + 1)); continue; fi
		# Both files as one token a line (split on space, comma, colon,
		# bar, quotes), compared pairwise.
		paste -d '\t' <(tr ' ,:|"' '\n\n\n\n\n' <"$f" | grep -v '^$') <(tr ' ,:|"' '\n\n\n\n\n' <"$g" | grep -v '^$') |
			awk -F'\t' -v name="$(basename "$f")" '
				function num(x) { return x ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
				$1 == $2 { next }
				num($1) && num($2) { n++; d = $1 - $2; d = d < 0 ? -d : d; m = ($1 < 0 ? -$1 : $1); if (m > 0 && d / m > r) r = d / m; next }
				{ o++ }
				END { printf "%s: %d numbers differ, largest relative difference %.2g; %d other tokens differ\n", name, n, r, o }'
	done
	echo "$same files identical"
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: $0 DROVER OUTDIR" >&2; exit 2; }
bin=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
cd "$(dirname "$0")/.."
T=../shared/traces
[ -d "$T" ] || { echo "$0: $T not found" >&2; exit 1; }

# The keys (anywhere in the JSON) that hold timings, and drover sim's
# advance mode (lazy by default since 2026-12-05, absent before).
jqtime='walk(if type == "object" then del(.wall_s, .phases_s, .decision_time_us, .schedule_call_time_us, .schedule_time_s, .command, .lazy_advance) else . end)'
# Text lines that hold timings, and paths.
untime() {
	sed -E -e '/^(wall time|phases) /d' -e '/^trained (.* )?in [0-9.]+(ms|s)$/d' -e 's/ simulations in [0-9.hms]+$/ simulations/' -e "s#$out#OUT#g" |
		awk '/decision time \(µs\) \|$/ { dt = 1 } /^$/ { dt = 0 } dt && /^\|/ { sub(/[^|]*\|$/, "") } { print }'
}

n=0
# sim NAME ARGS...: drover sim --json (timings removed), and the per-job CSV.
sim() {
	local name=$1; shift
	"$bin" sim --quiet --json --jobs-out "$out/sim-$name.jobs.csv" "$@" | jq -S "$jqtime" >"$out/sim-$name.json"
	n=$((n + 1))
}
# eval NAME ARGS...: drover eval's summary (timings removed) and its text.
evl() {
	local name=$1; shift
	"$bin" eval --quiet --out "$out/eval-$name.d" "$@" | untime >"$out/eval-$name.txt"
	jq -S "$jqtime" "$out/eval-$name.d/summary.json" >"$out/eval-$name.json"
	rm -rf "$out/eval-$name.d"
	n=$((n + 1))
}
# train NAME ARGS...: drover train's text, scalars, metadata and weights.
train() {
	local name=$1 d="$out/train-$1.d"; shift
	"$bin" train --quiet --out "$d" "$@" 2>&1 | untime >"$out/train-$name.txt"
	[ ! -f "$d/scalars.csv" ] || cut -d, -f1-3 "$d/scalars.csv" | grep -v ",charts/SPS," >"$out/train-$name.scalars.csv"
	jq -S "$jqtime" "$d/meta.json" | sed "s#$out#OUT#g" >"$out/train-$name.meta.json"
	(cd "$d" && sha256sum weights.safetensors) >"$out/train-$name.weights.sha256"
	rm -rf "$d"
	n=$((n + 1))
}

"$bin" 2>/dev/null | untime >"$out/default.txt"
"$bin" sim --quiet --workload $T/philly/pollux_workloads/workload-6.csv --model pollux --policy tiresias | untime >"$out/sim-w6-tiresias.txt"
for p in fifo first-fit random tiresias gandiva optimus strn sas; do
	sim "builtin-$p" --policy "$p"
done
sim builtin-first-fit-joblevel --policy first-fit --stragglers=false
sim builtin-first-fit-stret --policy first-fit --mitigation stret
sim builtin-sas-asp --policy sas --sync asp
sim builtin-tiresias-seed7 --policy tiresias --seed 7
sim w6-tiresias --workload $T/philly/pollux_workloads/workload-6.csv --model pollux --policy tiresias
sim w6-optimus --workload $T/philly/pollux_workloads/workload-6.csv --model pollux --policy optimus
sim philly-first-fit-joblevel --workload $T/philly/pollux_philly.csv.gz --policy first-fit --nodes 125 --gpus-per-node 8 --stragglers=false
sim philly-first-fit --workload $T/philly/pollux_philly.csv.gz --model drover --policy first-fit --nodes 125 --gpus-per-node 8
sim helios-first-fit --workload $T/helios/helios_venus_2vc_sept.csv --policy first-fit --nodes 22 --gpus-per-node 8
sim pai-tiresias --cluster pai --workload $T/alibaba_pai_v2023/openb_pod_list_default.csv

evl builtin --seeds 1-2 --policies strn,sas,first-fit,tiresias+asp,checkpoints/strn-rl,checkpoints/sas-rl
evl helios --seeds 1-2 --policies strn,sas,first-fit,tiresias+asp --workload $T/helios/helios_venus_2vc_sept.csv --nodes 22 --gpus-per-node 8

train default
train cartpole --env cartpole --algo ppo --steps 20000 --seed 1
train strn-rl --env strn-rl --algo ppo --steps 4000 --eval-seeds 1

echo "$n runs and 2 text outputs in $out ($("$bin" version 2>&1 | head -1))"
