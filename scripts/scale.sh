#!/usr/bin/env bash
# scale.sh: the simulator's scaling table (issue 20). Each cell replays the
# scaled synthetic workload (drover trace synth -jobs J -nodes G/8: the
# Philly fit, window load 0.8 on G GPUs) on G GPUs, 8 per node, event-driven,
# in its own process pinned to one core (GOMAXPROCS=1, taskset) under
# /usr/bin/time -v, and prints wall and CPU time, simulated events per
# second and peak RSS, then the growth exponent of CPU time in jobs
# (log-log least squares) per cluster, policy and model.
#
#   scripts/scale.sh                                 # first-fit, both models, 10k-1M jobs x 1k-100k GPUs
#   POLICIES="first-fit tiresias strn sas" JOBS="10000 100000" scripts/scale.sh
#   MODE=cli JOBS=1000000 GPUS=100000 scripts/scale.sh # drover trace synth | drover sim (lazy advance, as the bench mode)
#   MODE=cli EAGER=1 JOBS=100000 GPUS=10000 scripts/scale.sh # drover sim --lazy-advance=false
#
# Environment: JOBS, GPUS, POLICIES, MODELS (job worker), CPU (the core,
# default 1), TIMEOUT (seconds per cell, default 600), MODE (bench: the
# BenchmarkScale replay with lazy advance; cli: drover sim on the CSV
# drover trace synth writes under $TMPDIR, advancing jobs lazily as drover
# sim does by default; EAGER=1 adds --lazy-advance=false, advancing every
# job at every event), OUT (a
# file for the raw rows). Generated
# traces go under $TMPDIR (default /tmp), never into the repository.
set -euo pipefail

JOBS=${JOBS:-"10000 100000 1000000"}
GPUS=${GPUS:-"1000 10000 100000"}
POLICIES=${POLICIES:-"first-fit"}
MODELS=${MODELS:-"job worker"}
CPU=${CPU:-1}
TIMEOUT=${TIMEOUT:-600}
MODE=${MODE:-bench}
TMPDIR=${TMPDIR:-/tmp}
OUT=${OUT:-$TMPDIR/drover-scale-$$.tsv}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "$TMPDIR/drover-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT

cd "$root"
go build -o "$work/drover" ./cmd/drover
go test -c -o "$work/trace.test" ./env/trace

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), mode $MODE, core $CPU, GOMAXPROCS=1" | tee "$OUT"
printf 'jobs\tgpus\tpolicy\tmodel\twall_s\tcpu_s\tevents\tevents_per_s\tpeak_rss_mib\tstatus\tavg_queue_s\n' | tee -a "$OUT"

for g in $GPUS; do
	for j in $JOBS; do
		if [ "$MODE" = cli ]; then
			csv="$work/synth-$j-$g.csv"
			"$work/drover" trace synth -quiet -jobs "$j" -nodes $((g / 8)) -o "$csv" 2>"$work/err" || { echo "# $j jobs on $g GPUs: $(cat "$work/err")" | tee -a "$OUT"; continue; }
		fi
		for p in $POLICIES; do
			for m in $MODELS; do
				st=ok
				if [ "$MODE" = cli ]; then
					strag=false; [ "$m" = worker ] && strag=true
					( cd "$work" && GOMAXPROCS=1 timeout "$TIMEOUT" taskset -c "$CPU" /usr/bin/time -v -o "$work/time" \
						./drover sim --workload "$csv" --policy "$p" --nodes $((g / 8)) --gpus-per-node 8 --stragglers=$strag \
						--profiles builtin --quiet --json ${EAGER:+--lazy-advance=false} >"$work/run" 2>"$work/err" ) || st="exit $?"
					events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$work/run")
					queue=$(sed -n 's/.*"avg_queue_s": \([0-9.e+-]*\).*/\1/p' "$work/run")
					cpu=$(awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{print u+s}' "$work/time" 2>/dev/null || echo)
				else
					pat="^BenchmarkScale\$/^jobs=$j\$/^gpus=$g\$/^$p\$/^model=$m\$"
					( cd "$work" && GOMAXPROCS=1 timeout "$TIMEOUT" taskset -c "$CPU" /usr/bin/time -v -o "$work/time" \
						./trace.test -test.run '^$' -test.bench "$pat" -test.benchtime 1x -scale.maxjobs 1000000 >"$work/run" 2>"$work/err" ) || st="exit $?"
					grep -q -- '--- FAIL\|--- SKIP' "$work/run" && st="failed: $(grep -m1 -A1 -- '--- FAIL\|--- SKIP' "$work/run" | tail -1 | sed 's/^ *//')"
					line=$(grep '^BenchmarkScale' "$work/run" | head -1 || true)
					events=$(echo "$line" | awk '{for(i=1;i<=NF;i++) if($i=="events/op") print $(i-1)}')
					cpu=$(echo "$line" | awk '{for(i=1;i<=NF;i++) if($i=="cpu-s/op") print $(i-1)}')
					wall=$(echo "$line" | awk '{print $3/1e9}')
					queue=$(echo "$line" | awk '{for(i=1;i<=NF;i++) if($i=="avg-queue-s") print $(i-1)}')
				fi
				[ "$MODE" = cli ] && wall=$(awk '/Elapsed \(wall clock\)/{n=split($NF,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time" 2>/dev/null || echo)
				rss=$(awk '/Maximum resident set size/{printf "%.0f", $NF/1024}' "$work/time" 2>/dev/null || echo)
				eps=""; [ -n "${events:-}" ] && [ -n "${wall:-}" ] && eps=$(awk -v e="$events" -v w="$wall" 'BEGIN{if (w>0) printf "%.0f", e/w}')
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$j" "$g" "$p" "$m" "${wall:-}" "${cpu:-}" "${events:-}" "$eps" "$rss" "$st" "${queue:-}" | tee -a "$OUT"
				events=""; wall=""; cpu=""; queue=""
			done
		done
	done
done

echo "# growth exponent of CPU time in jobs (log-log least squares), per GPUs, policy, model" | tee -a "$OUT"
awk -F'\t' '!/^#/ && $10=="ok" && $6>0 { k=$2"\t"$3"\t"$4; x=log($1); y=log($6); n[k]++; sx[k]+=x; sy[k]+=y; sxx[k]+=x*x; sxy[k]+=x*y }
	END { for (k in n) if (n[k]>=2) { b=(n[k]*sxy[k]-sx[k]*sy[k])/(n[k]*sxx[k]-sx[k]*sx[k]); printf "%s\t%.2f\t(%d sizes)\n", k, b, n[k] } }' "$OUT" | sort | tee -a "$OUT.exp"
echo "# peak RSS against jobs (least squares RSS = a + b x jobs): b in KiB per job, a in MiB" | tee -a "$OUT.exp"
awk -F'\t' '!/^#/ && $10=="ok" && $9>0 { k=$2"\t"$3"\t"$4; x=$1; y=$9; n[k]++; sx[k]+=x; sy[k]+=y; sxx[k]+=x*x; sxy[k]+=x*y }
	END { for (k in n) if (n[k]>=2) { b=(n[k]*sxy[k]-sx[k]*sy[k])/(n[k]*sxx[k]-sx[k]*sx[k]); a=(sy[k]-b*sx[k])/n[k]; printf "%s\t%.2f KiB/job\t%.0f MiB\t(%d sizes)\n", k, b*1024, a, n[k] } }' "$OUT" | sort | tee -a "$OUT.exp"
echo "# rows in $OUT, exponents in $OUT.exp"
