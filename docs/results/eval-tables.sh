#!/usr/bin/env bash
# Regenerates the strong-baseline tables of docs/results/eval.md and the
# claims table of docs/results/claims.md: drover eval's default set (strn,
# sas, 16 baselines, the papers' comparison systems: Sync-Switch and LB-BSP
# on first-fit, tiresias and gandiva, and Themis; 3 oracle-sync upper
# bounds) over 20 seeds on the built-in workload, Philly's later half,
# Helios and Alibaba PAI, each in its default straggler regime, with the
# convergence model at its fit and at both ends of its band (--convergence
# sweep: table.md and summary.json at the fit with the line saying whether
# the ranking of the top three holds, table-low.md, table-high.md and their
# summaries), then docs/results/claims.py over the summaries.
#   bash docs/results/eval-tables.sh      # 1-4 hours on 2 cores
# (SEEDS=1-2 at 3714cfb: 6.8 min of CPU, 25 min wall on the 2-core machine
# shared with other sessions: built-in 6 s, Philly 51 s, Helios 10.9 min,
# PAI 13.1 min; the time grows with the seeds.)
# SEEDS=1-5 for a quick look; OUT=dir to write elsewhere.
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${SEEDS:-1-20}
out=${OUT:-docs/results}
traces=../shared/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/drover
go build -o "$bin" ./cmd/drover

# Philly's later half as drover train holds it out (train.split 0.5), at
# its offered load on 22 nodes x 8 GPUs.
"$bin" trace convert -late 0.5 -offered-load 1.09 -gpus 176 -o "$tmp/philly-late.csv" \
  "$traces/philly/pollux_philly.csv.gz" >/dev/null

run() { # name, then drover eval's flags
  local name=$1
  shift
  echo "== $name" >&2
  mkdir -p "$out/eval-$name"
  "$bin" eval --seeds "$seeds" --quiet --convergence sweep --out "$out/eval-$name" "$@" >"$out/eval-$name/stdout.txt"
}
run builtin --workload builtin
run philly-late --workload "$tmp/philly-late.csv" --nodes 22 --gpus-per-node 8 --profiles "$traces/pollux_apps"
run helios --workload "$traces/helios/helios_venus_2vc_sept.csv" --nodes 22 --gpus-per-node 8
run pai --workload "$traces/alibaba_pai_v2023/openb_pod_list_default.csv" --cluster pai
python3 docs/results/claims.py "$out"/eval-{builtin,philly-late,helios,pai}/summary.json >"$out/claims-table.md"
