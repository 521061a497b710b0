#!/usr/bin/env bash
# Regenerates the tables of docs/results/stret.md: STRET against no mitigation
# and against the replace-straggler baseline, first-fit placement, BSP, the
# per-worker Drover model (fitted background, each regime's jitter), seeds
# 1-20 (SEEDS="1 2 3" for fewer), on homogeneous and heterogeneous clusters.
# Each figure is the mean over seeds with the half-width of its 95% t-interval;
# "vs none" is the mean of the per-seed ratios to the same seed's run without
# mitigation, minus 1 (paired), with its interval.
#   bash docs/results/stret-table.sh > /tmp/stret-tables.md     (about two minutes)
# Needs jq and awk. Every run is one command:
#   drover sim --quiet --json --policy first-fit --mitigation M --seed S <setup flags>
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o /tmp/drover-stret ./cmd/drover
seeds=${SEEDS:-$(seq 1 20)}
pollux=../shared/traces/pollux_apps
helios=../shared/traces/helios/helios_venus_2vc_sept.csv
# name|regime|flags
setups=(
  "built-in, 16 x 4 GPUs|dedicated|--workload builtin --profiles $pollux --nodes 16 --gpus-per-node 4"
  "Helios, 22 x 8 GPUs|dedicated|--workload $helios --nodes 22 --gpus-per-node 8"
  "built-in, PAI first 32 nodes|shared|--workload builtin --profiles $pollux --cluster pai --nodes 32"
  "built-in, PAI first 32 nodes|dedicated|--workload builtin --profiles $pollux --cluster pai --nodes 32 --regime dedicated"
  "built-in, PAI all 1213 nodes|shared|--workload builtin --profiles $pollux --cluster pai"
)
runs=$(mktemp)
jobs=$(mktemp)
trap 'rm -f "$runs" "$jobs"' EXIT
# Ablations (--stret-off STAGE) on the first three setups.
for s in "${setups[@]}"; do
  IFS='|' read -r name regime flags <<<"$s"
  variants="none stret replace"
  case "$name ($regime)" in
  "built-in, 16 x 4 GPUs (dedicated)" | "Helios, 22 x 8 GPUs (dedicated)" | "built-in, PAI first 32 nodes (shared)")
    variants="$variants stret-relay stret-withhold stret-tune" ;;
  esac
  for m in $variants; do
    mit=${m%%-*}
    off=""
    [ "$mit" != "$m" ] && off="--stret-off ${m#*-}"
    for seed in $seeds; do
      # shellcheck disable=SC2086
      sum=$(/tmp/drover-stret sim --quiet --json --policy first-fit --mitigation "$mit" $off --seed "$seed" --jobs-out "$jobs" $flags)
      # The multi-GPU jobs (the only ones a mitigation can touch): their
      # mean TTA and their GPU-hours, from --jobs-out.
      multi=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["gpus"] > 1 && $c["tta"] != "NaN" { n++; t += $c["tta"]; g += $c["gpu_seconds"] }
        END { printf "%.6f\t%.6f\t%d", n ? t / n : 0, g / 3600, n }' "$jobs")
      echo "$sum" | jq -r --arg setup "$name ($regime)" --arg m "$m" --arg seed "$seed" --arg multi "$multi" \
        '[$setup, $m, $seed, .avg_tta_s, .gpu_hours, .avg_jct_s, .iterations_with_straggler,
          (.mitigation.relay_jobs // 0), (.mitigation.relay_changes // 0), (.mitigation.withheld_jobs // 0),
          (.mitigation.tuned_jobs // 0), (.mitigation.replacements // 0), (.mitigation.replaced_jobs // 0)]
          + ($multi | split("\t") | map(tonumber)) | @tsv' >>"$runs"
    done
  done
done
awk -F'\t' '
function tq(n) { return n >= 30 ? 1.96 : (n == 20 ? 2.093 : (n == 10 ? 2.262 : (n == 5 ? 2.776 : (n == 3 ? 4.303 : 2)))) }
function stat(sum, sq, n,   mean, sd) { mean = sum / n; sd = n > 1 ? sqrt((sq - n * mean * mean) / (n - 1)) : 0; return sprintf("%s ± %s", fmt(mean), fmt(tq(n) * sd / sqrt(n))) }
function pct(sum, sq, n,   mean, sd) { mean = sum / n; sd = n > 1 ? sqrt((sq - n * mean * mean) / (n - 1)) : 0; return sprintf("%+.1f%% ± %.1f", 100 * mean, 100 * tq(n) * sd / sqrt(n)) }
function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
{
  k = $1 SUBSEP $2; n[k]++; setup[$1] = 1; if (!($1 in order)) { order[$1] = ++ns; names[ns] = $1 }
  for (c = 4; c <= 16; c++) { sum[k, c] += $c; sq[k, c] += $c * $c; v[$1, $2, $3, c] = $c }
  seedsof[k] = seedsof[k] " " $3
}
END {
  print "| cluster (regime) | mitigation | avg TTA (s) | TTA vs none | GPU-hours | GPU-hours vs none | avg JCT (s) | JCT vs none | iterations with a straggler |"
  print "|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= ns; i++) {
    s = names[i]
    split("none stret replace", ms, " ")
    for (j = 1; j <= 3; j++) {
      m = ms[j]; k = s SUBSEP m; if (!(k in n)) continue
      row = sprintf("| %s | %s | %s", s, m, stat(sum[k, 4], sq[k, 4], n[k]))
      for (c = 4; c <= 6; c++) {
        if (c > 4) row = row sprintf(" | %s", stat(sum[k, c], sq[k, c], n[k]))
        if (m == "none") { row = row " | -"; continue }
        rs = 0; rq = 0; cnt = split(substr(seedsof[k], 2), sd, " ")
        for (q = 1; q <= cnt; q++) { r = v[s, m, sd[q], c] / v[s, "none", sd[q], c] - 1; rs += r; rq += r * r }
        row = row sprintf(" | %s", pct(rs, rq, cnt))
      }
      row = row sprintf(" | %.2f%% |", 100 * sum[k, 7] / n[k])
      print row
    }
  }
  print ""
  print "| cluster (regime) | multi-GPU jobs | mitigation | their avg TTA (s) | vs none | their GPU-hours | vs none |"
  print "|---|---|---|---|---|---|---|"
  for (i = 1; i <= ns; i++) {
    s = names[i]
    for (j = 1; j <= 3; j++) {
      m = ms[j]; k = s SUBSEP m; if (!(k in n)) continue
      row = sprintf("| %s | %.0f | %s", s, sum[k, 16] / n[k], m)
      for (c = 14; c <= 15; c++) {
        row = row sprintf(" | %s", stat(sum[k, c], sq[k, c], n[k]))
        if (m == "none") { row = row " | -"; continue }
        rs = 0; rq = 0; cnt = split(substr(seedsof[k], 2), sd, " ")
        for (q = 1; q <= cnt; q++) { r = v[s, m, sd[q], c] / v[s, "none", sd[q], c] - 1; rs += r; rq += r * r }
        row = row sprintf(" | %s", pct(rs, rq, cnt))
      }
      print row " |"
    }
  }
  print ""
  print "| cluster (regime) | STRET without | avg TTA (s) | vs full STRET | GPU-hours | vs full STRET | multi-GPU jobs avg TTA (s) | vs full STRET |"
  print "|---|---|---|---|---|---|---|---|"
  split("relay withhold tune", stg, " ")
  for (i = 1; i <= ns; i++) {
    s = names[i]
    for (j = 1; j <= 3; j++) {
      m = "stret-" stg[j]; k = s SUBSEP m; if (!(k in n)) continue
      row = sprintf("| %s | %s", s, stg[j])
      split("4 5 14", cols, " ")
      for (cc = 1; cc <= 3; cc++) {
        c = cols[cc]
        row = row sprintf(" | %s", stat(sum[k, c], sq[k, c], n[k]))
        rs = 0; rq = 0; cnt = split(substr(seedsof[k], 2), sd, " ")
        for (q = 1; q <= cnt; q++) { r = v[s, m, sd[q], c] / v[s, "stret", sd[q], c] - 1; rs += r; rq += r * r }
        row = row sprintf(" | %s", pct(rs, rq, cnt))
      }
      print row " |"
    }
  }
  print ""
  print "| cluster (regime) | STRET: jobs relaying | relay changes | jobs withholding | jobs tuned | replace: workers replaced | jobs with a replacement |"
  print "|---|---|---|---|---|---|---|"
  for (i = 1; i <= ns; i++) {
    s = names[i]; k = s SUBSEP "stret"; r = s SUBSEP "replace"
    printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", s, sum[k, 8] / n[k], sum[k, 9] / n[k], sum[k, 10] / n[k], sum[k, 11] / n[k], sum[r, 12] / n[r], sum[r, 13] / n[r]
  }
}' "$runs"
