#!/usr/bin/env bash
# Regenerates the policy x mitigation table of docs/results/stragglers.md:
# per-worker Drover model (fitted background, calibrated jitter), seed 1.
#   bash docs/results/stragglers-table.sh > /tmp/table.md
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o /tmp/drover-results ./cmd/drover
field() { sed -n "s/.*\"$1\": *\([^,]*\),*/\1/p"; }
run() { # workload nodes gpus policy mitigation
  /tmp/drover-results sim --quiet --json --workload "$1" --nodes "$2" --gpus-per-node "$3" \
    --policy "$4" --mitigation "$5" --seed 1
}
echo "| workload | policy | mitigation | avg JCT (s) | avg TTA (s) | straggling worker-iterations | iterations with a straggler | GPU-hours |"
echo "|---|---|---|---|---|---|---|---|"
for w in "builtin 16 4" "../shared/traces/helios/helios_venus_2vc_sept.csv 22 8"; do
  set -- $w
  for p in ${POLICIES:-strn sas first-fit tiresias}; do
    for m in none stret; do
      out=$(run "$1" "$2" "$3" "$p" "$m")
      printf '| %s | %s | %s | %.0f | %.0f | %.3g | %.2f%% | %.0f |\n' "$(basename "$1")" "$p" "$m" \
        "$(echo "$out" | field avg_jct_s)" "$(echo "$out" | field avg_tta_s)" \
        "$(echo "$out" | field straggler_worker_iterations)" \
        "$(echo "$out" | field iterations_with_straggler | awk '{print 100*$1}')" \
        "$(echo "$out" | field gpu_hours)"
    done
  done
done
