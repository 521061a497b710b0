#!/usr/bin/env bash
# The teacher's runs beside docs/results/learned-*/summary.json: sas-rl's
# teacher (sas+strn-sync: SAS with STRN's sync rule), with strn and the
# sas-rl checkpoint again as the check that the runs pair seed by seed with
# the stored ones (learned.py compares them bit for bit), on the seeds and
# flags of learned-tables.sh. Writes learned-W/teacher/. strn-rl's teacher
# is strn, already in summary.json. learned-tables.sh's own runs now
# include the teacher (drover eval adds it beside a checkpoint), so this is
# for the stored tables measured before that.
#   bash docs/results/learned-teacher.sh     # about 10 minutes on 2 cores
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

policies=sas+strn-sync,strn,checkpoints/sas-rl
run() { # name, then drover eval's flags
  local name=$1
  shift
  echo "== $name" >&2
  local dir=$out/learned-$name/teacher
  mkdir -p "$dir"
  "$bin" eval --seeds "$seeds" --quiet --policies "$policies" --out "$tmp/$name" "$@" >"$dir/stdout.txt"
  cp "$tmp/$name/summary.json" "$tmp/$name/table.md" "$dir/"
}
run builtin --workload builtin
run philly-late --workload "$tmp/philly-late.csv" --nodes 22 --gpus-per-node 8 --profiles "$traces/pollux_apps"
run helios --workload "$traces/helios/helios_venus_2vc_sept.csv" --nodes 22 --gpus-per-node 8
run pai --workload "$traces/alibaba_pai_v2023/openb_pod_list_default.csv" --cluster pai
