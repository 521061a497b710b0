#!/usr/bin/env bash
# Regenerates the tables of docs/results/learned.md: the direct learned
# policies (checkpoints/strn-rl, checkpoints/sas-rl) against STRN, SAS and
# sas-rl's teacher sas+strn-sync (drover eval adds it beside the checkpoint)
# over the 20 seeds of docs/results/eval.md on the built-in workload,
# Philly's later half, Helios and PAI, with the same flags as
# eval-tables.sh (--convergence sweep included), so every run pairs seed by
# seed with the baselines of docs/results/eval-*/summary.json; then
# learned.py's comparison table.
#   bash docs/results/learned-tables.sh     # 0.5-1.5 hours on 2 cores
# (SEEDS=1-2 at 3714cfb: 2.5 min of CPU, 8.4 min wall on the shared
# 2-core machine, PAI 7 of them.)
# SEEDS=1-5 for a quick look (the pairing then uses those seeds); OUT=dir
# to write elsewhere; BASE=dir for the eval-W baselines to pair with (an
# eval-tables.sh run's OUT; default docs/results).
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${SEEDS:-1-20}
out=${OUT:-docs/results}
traces=../shared/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/drover
go build -o "$bin" ./cmd/drover
"$bin" trace convert -late 0.5 -offered-load 1.09 -gpus 176 -o "$tmp/philly-late.csv" \
  "$traces/philly/pollux_philly.csv.gz" >/dev/null

policies=checkpoints/strn-rl,checkpoints/sas-rl,strn,sas
run() { # name, then drover eval's flags
  local name=$1
  shift
  echo "== $name" >&2
  mkdir -p "$out/learned-$name"
  "$bin" eval --seeds "$seeds" --quiet --convergence sweep --policies "$policies" --out "$out/learned-$name" "$@" >"$out/learned-$name/stdout.txt"
}
run builtin --workload builtin
run philly-late --workload "$tmp/philly-late.csv" --nodes 22 --gpus-per-node 8 --profiles "$traces/pollux_apps"
run helios --workload "$traces/helios/helios_venus_2vc_sept.csv" --nodes 22 --gpus-per-node 8
run pai --workload "$traces/alibaba_pai_v2023/openb_pod_list_default.csv" --cluster pai
python3 docs/results/learned.py "$out" "${BASE:-docs/results}" >"$out/learned-table.md"
