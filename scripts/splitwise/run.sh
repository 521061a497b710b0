#!/usr/bin/env bash
# One SplitwiseSim run, llama2-70b, on Debian's Python with our stand-ins for
# networkx and Hydra (shim/).
#
# Usage: scripts/splitwise/run.sh SPLITWISE_SRC CONFIG TRACE.csv RUN_DIR [OVERRIDE...]
#
#   SPLITWISE_SRC  a checkout of github.com/Mutinifni/splitwise-sim (this
#                  script fetches nothing and changes nothing there)
#   CONFIG         baseline_h100: NUM_H100 (default 2) DGX-H100 machines, one
#                    TP-8 instance each doing prompt and tokens, token_jsq
#                    (SplitwiseSim's scripts/run_baseline_h.sh);
#                  splitwise_ha: NUM_H100 (default 1) DGX-H100 prompt machines
#                    and NUM_A100 (default 1) DGX-A100 token machines,
#                    mixed_pool (scripts/run_splitwise_ha.sh; the start state
#                    is named splitwise_1_1 in its results paths)
#   TRACE.csv      a trace in SplitwiseSim's format (make_trace.py writes one);
#                  no request may arrive at t = 0 (README.md)
#   RUN_DIR        where SplitwiseSim writes its results (Hydra's run dir)
#   OVERRIDE...    more Hydra-style overrides, e.g. debug=True (per-iteration
#                  logs in RUN_DIR/instances/), seed=1
#
# Prints the simulator command's times to stderr as
# "splitwise-sim wall_s=<s> user_s=<s> sys_s=<s>". Needs /usr/bin/python3 with
# python3-numpy, python3-pandas, python3-scipy, python3-omegaconf (Debian).
set -euo pipefail
if [ $# -lt 4 ]; then awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; fi
src=$(cd "$1" && pwd); config=$2; trace=$(realpath "$3"); run_dir=$(realpath -m "$4"); shift 4
shim=$(cd "$(dirname "$0")/shim" && pwd)
case $config in
baseline_h100)
	set -- applications.0.scheduler=token_jsq cluster=half_half \
		cluster.servers.0.count=0 cluster.servers.1.count="${NUM_H100:-2}" \
		start_state=baseline "$@" ;;
splitwise_ha)
	set -- applications.0.scheduler=mixed_pool cluster=half_half \
		cluster.servers.0.count="${NUM_A100:-1}" cluster.servers.1.count="${NUM_H100:-1}" \
		start_state=splitwise start_state.split_type=heterogeneous "$@" ;;
*) echo "run.sh: unknown config $config (baseline_h100, splitwise_ha)" >&2; exit 2 ;;
esac
tdir=$(dirname "$trace"); tname=$(basename "$trace" .csv)
cd "$src"
# bash's time keyword: the command's wall, user and system seconds
TIMEFORMAT='splitwise-sim wall_s=%3R user_s=%3U sys_s=%3S'
time PYTHONPATH="$shim" /usr/bin/python3 run.py "$@" \
	applications.0.model_architecture=llama2-70b \
	applications.0.model_size=llama2-70b-fp16 \
	performance_model=db \
	trace.dir="$tdir" trace.filename="$tname" \
	hydra.run.dir="$run_dir"
