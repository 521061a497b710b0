#!/usr/bin/env bash
# Regenerates the table of docs/results/ps.md: SAS with its parameter-server
# load reassignment (sas) against SAS with an even PS split (sas-even-ps) on
# PS-heavy workloads, seeds 1-20, per-worker Drover model.
#   bash docs/results/ps-table.sh > /tmp/ps-table.md     # about 5 minutes on 2 cores
# SEEDS=1-5 for a quick look. Needs python3 for the paired statistics.
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${SEEDS:-1-20}
traces=../shared/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/drover
go build -o "$bin" ./cmd/drover

# Each case: name, workload, PS share, nodes, GPUs per node, profiles. The
# workload is first written with its architectures (trace convert), so that
# eval and the per-job sims replay the same PS jobs.
cases=(
  "builtin|builtin|1|16|4|builtin"
  "builtin|builtin|0.5|16|4|builtin"
  "helios|$traces/helios/helios_venus_2vc_sept.csv|1|22|8|$traces/pollux_apps"
  "helios|$traces/helios/helios_venus_2vc_sept.csv|0.5|22|8|$traces/pollux_apps"
  "philly-late|$traces/philly/pollux_philly.csv.gz|1|22|8|$traces/pollux_apps"
)

echo "| workload | PS share | PS jobs | avg JCT sas (s) | avg JCT sas-even-ps (s) | avg JCT change | PS jobs' avg JCT change | GPU-hours change |"
echo "|---|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  IFS='|' read -r name src share nodes gpn prof <<<"$c"
  w=$tmp/$name-$share.csv
  if [ "$name" = philly-late ]; then
    # drover train's held-out Philly jobs (train.split 0.5) at its offered load.
    "$bin" trace convert -late 0.5 -offered-load 1.09 -gpus $((nodes * gpn)) -ps-share "$share" -o "$w" "$src" >/dev/null
  else
    "$bin" trace convert -ps-share "$share" -o "$w" "$src" >/dev/null
  fi
  out=$tmp/$name-$share
  "$bin" eval --workload "$w" --nodes "$nodes" --gpus-per-node "$gpn" --profiles "$prof" \
    --policies sas,sas-even-ps --seeds "$seeds" --quiet --out "$out" >/dev/null
  for s in $(python3 -c "
import sys
for part in sys.argv[1].split(','):
    a, _, b = part.partition('-')
    print(*range(int(a), int(b or a) + 1))" "$seeds"); do
    for p in sas sas-even-ps; do
      "$bin" sim --workload "$w" --nodes "$nodes" --gpus-per-node "$gpn" --profiles "$prof" \
        --policy "$p" --seed "$s" --quiet --jobs-out "$out/jobs-$p-$s.csv" >/dev/null
    done
  done
  python3 - "$name" "$share" "$w" "$out" <<'PY'
import csv, json, math, sys
name, share, wpath, out = sys.argv[1:]
# Two-sided 95% Student-t quantiles by degrees of freedom.
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
     10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
     18: 2.101, 19: 2.093, 20: 2.086, 24: 2.064, 29: 2.045}
def ci(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float('nan')
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, T.get(n - 1, 1.96) * sd / math.sqrt(n)
ps = {r['name'] for r in csv.DictReader(open(wpath)) if r['arch'] == 'ps'}
summ = json.load(open(out + '/summary.json'))
runs = {p['name']: {r['seed']: r for r in p['runs']} for p in summ['policies']}
seeds = sorted(runs['sas'])
def pair(key):
    return [runs['sas'][s][key] / runs['sas-even-ps'][s][key] - 1 for s in seeds]
def psjct(p, s):
    rows = [r for r in csv.DictReader(open(f'{out}/jobs-{p}-{s}.csv')) if r['name'] in ps]
    return sum(float(r['jct']) for r in rows) / len(rows)
jsas, jeven = ci([runs['sas'][s]['avg_jct_s'] for s in seeds]), ci([runs['sas-even-ps'][s]['avg_jct_s'] for s in seeds])
d, dps, dgh = ci(pair('avg_jct_s')), ci([psjct('sas', s) / psjct('sas-even-ps', s) - 1 for s in seeds]), ci(pair('gpu_hours'))
pct = lambda m: f'{100 * m[0]:+.1f} ± {100 * m[1]:.1f}%'
print(f'| {name} | {share} | {len(ps)} | {jsas[0]:.0f} ± {jsas[1]:.0f} | {jeven[0]:.0f} ± {jeven[1]:.0f} | {pct(d)} | {pct(dps)} | {pct(dgh)} |')
PY
done
echo
echo "Changes are sas / sas-even-ps - 1, paired by seed (seeds $seeds): mean ± the half-width of the 95% t-interval; negative favours the reassignment."
