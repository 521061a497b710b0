#!/bin/bash
# Records a served run of LLM request routing and re-scores it offline
# (docs/results/rescoring.md, "Routes"): drover serve answers Route with
# HACK's router while the committed pd-rl checkpoint decides in shadow
# behind the route gate (-route-deployment pd-rl), drover infer sim
# --remote routes the first 10 minutes of the Azure 2023 conv trace through
# it on that deployment, and drover eval --log re-scores the route log:
# the whole log (exact), then 10 windows of 120 s (intervals). Writes the
# outputs to docs/results/route-rescoring/. A few seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o /tmp/drover-route ./cmd/drover
res=docs/results/route-rescoring
tmp=$(mktemp -d)
trace=../shared/traces/llm/azure_llm_2023/AzureLLMInferenceTrace_conv.csv
mkdir -p $res
/tmp/drover-route serve -addr 127.0.0.1:50941 -metrics-addr "" -route checkpoints/pd-rl -route-deployment pd-rl \
	-log-dir "$tmp/log" > "$tmp/serve.log" 2>&1 &
pid=$!
sleep 1
/tmp/drover-route infer sim --remote 127.0.0.1:50941 --cluster pd-rl --trace $trace --duration 600 --shift 1 \
	--slo-ttft 5 | grep -v '^simulated' > $res/served.txt
kill $pid
wait $pid || true
grep 'routes:' "$tmp/serve.log" | sed 's/^drover serve: //' > $res/gate.txt
policies=hack,disagg-fp16,token_jsq,checkpoints/pd-rl
/tmp/drover-route eval --log "$tmp/log/routes.jsonl" --policies $policies --slo-ttft 5 --out "$tmp/whole" |
	grep -v '^wrote\|simulations in' > $res/whole.txt
/tmp/drover-route eval --log "$tmp/log/routes.jsonl" --policies $policies --slo-ttft 5 --seeds 1-10 --duration 120 --out "$tmp/windows" |
	grep -v '^wrote\|simulations in' > $res/windows.txt
sed -i "s|$tmp/log/|LOG/|g" $res/*.txt
echo "outputs in $res; runs in $tmp"
