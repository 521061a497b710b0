#!/usr/bin/env bash
# The SplitwiseSim reference runs of issue 34 ("Splitwise-faithful mode",
# "Speed"): llama2-70b on the Azure LLM inference traces 2023, arrivals
# shifted by 1 s.
#
# Usage: scripts/splitwise/reference.sh SPLITWISE_SRC OUT_DIR [REPS]
#
# Writes to OUT_DIR:
#   traces/azure_code.csv, traces/azure_conv_10min.csv  the inputs, in
#       SplitwiseSim's format (make_trace.py)
#   a_baseline_h100_code.{requests,summary}.csv   (a) 2 DGX-H100, token_jsq
#   b_splitwise_ha_code.{requests,summary}.csv    (b) 1 DGX-H100 prompt +
#       1 DGX-A100 token machine, mixed_pool
#   {a_baseline_h100,b_splitwise_ha}_conv10min.{requests,summary}.csv
#       both on the first 10 minutes of the conv trace
#   speed.csv   config,trace,rep,wall_s,user_s,sys_s: the whole simulator
#       command (bash's time), REPS (default 5) times each, the two configs
#       alternating
#   runs/<name>/  SplitwiseSim's own output directories (the code runs with
#       debug=True: per-iteration logs in runs/<name>/instances/)
#   provenance.txt  SplitwiseSim commit (SPLITWISE_COMMIT, else git in
#       SPLITWISE_SRC), a hash of its sources, Python and package versions
set -euo pipefail
if [ $# -lt 2 ]; then awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; fi
src=$(cd "$1" && pwd); out=$(realpath -m "$2"); reps=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
azure=$(cd "$here/../.." && pwd)/../shared/traces/llm/azure_llm_2023
mkdir -p "$out/traces" "$out/runs"

commit=${SPLITWISE_COMMIT:-$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)}
{
	echo "splitwise-sim commit: $commit"
	echo "splitwise-sim sources sha256: $(cd "$src" && find . -path ./results -prune -o -type f \( -name '*.py' -o -name '*.yaml' -o -name '*.yml' -o -name '*.csv' \) -print | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
	echo "python: $(/usr/bin/python3 --version 2>&1)"
	/usr/bin/python3 -c 'import numpy, pandas, scipy, omegaconf; print("numpy", numpy.__version__, "pandas", pandas.__version__, "scipy", scipy.__version__, "omegaconf", omegaconf.__version__)'
	echo "drover commit: $(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)"
	echo "date: $(date -u +%FT%TZ)  host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/provenance.txt"

/usr/bin/python3 "$here/make_trace.py" "$azure/AzureLLMInferenceTrace_code.csv" "$out/traces/azure_code.csv"
/usr/bin/python3 "$here/make_trace.py" "$azure/AzureLLMInferenceTrace_conv.csv" "$out/traces/azure_conv_10min.csv" --minutes 10

run() { # name config trace overrides...
	local name=$1 config=$2 trace=$3; shift 3
	rm -rf "$out/runs/$name"
	"$here/run.sh" "$src" "$config" "$trace" "$out/runs/$name" "$@" \
		> "$out/runs/$name.log" 2> "$out/runs/$name.err" || { cat "$out/runs/$name.err" >&2; exit 1; }
	# "wall_s=W user_s=U sys_s=S" -> "W,U,S"
	grep -o 'wall_s=.*' "$out/runs/$name.err" | sed 's/[a-z_]*=//g; s/ /,/g'
}

for x in "a_baseline_h100 baseline_h100" "b_splitwise_ha splitwise_ha"; do
	set -- $x
	w=$(run "$1_code" "$2" "$out/traces/azure_code.csv" debug=True)
	echo "$1_code: wall,user,sys ${w} s (debug=True)"
	/usr/bin/python3 "$here/collect.py" "$out/runs/$1_code" "$out/traces/azure_code.csv" "$out/$1_code"
done

echo "config,trace,rep,wall_s,user_s,sys_s" > "$out/speed.csv"
for rep in $(seq 1 "$reps"); do
	for x in "a_baseline_h100 baseline_h100" "b_splitwise_ha splitwise_ha"; do
		set -- $x
		w=$(run "$1_conv10min" "$2" "$out/traces/azure_conv_10min.csv")
		echo "$2,azure_conv_10min,$rep,$w" >> "$out/speed.csv"
		echo "$1_conv10min rep $rep: wall,user,sys ${w} s"
	done
done
for x in a_baseline_h100 b_splitwise_ha; do
	/usr/bin/python3 "$here/collect.py" "$out/runs/${x}_conv10min" "$out/traces/azure_conv_10min.csv" "$out/${x}_conv10min"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/provenance.txt"
