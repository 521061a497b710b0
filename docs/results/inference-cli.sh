#!/usr/bin/env bash
# Regenerates the outputs of docs/results/inference.md, section "Simulator
# and CLI": drover infer sim without flags, on the whole Azure 2023 code
# and conv traces (shifted 1 s, as SplitwiseSim needs) on both Splitwise
# presets, drover trace inspect of the code trace, and drover infer eval of
# the two presets over 10 random 10-minute windows of each trace.
#   bash docs/results/inference-cli.sh    # a few seconds on 2 cores
# OUT=dir to write elsewhere.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-docs/results}
traces=../shared/traces/llm/azure_llm_2023
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/drover
go build -o "$bin" ./cmd/drover
mkdir -p "$out/infer-cli"

"$bin" infer sim >"$out/infer-cli/default.txt"
for k in code conv; do
  for c in splitwise-baseline splitwise-ha; do
    "$bin" infer sim --trace "$traces/AzureLLMInferenceTrace_$k.csv" --shift 1 --cluster "$c" >"$out/infer-cli/$k-$c.txt"
  done
  mkdir -p "$out/infer-eval-$k"
  "$bin" infer eval --quiet --trace "$traces/AzureLLMInferenceTrace_$k.csv" --shift 1 --duration 600 --seeds 1-10 \
    --out "$out/infer-eval-$k" >"$out/infer-eval-$k/stdout.txt"
done
"$bin" trace inspect "$traces/AzureLLMInferenceTrace_code.csv" >"$out/infer-cli/inspect-code.txt"
# The wall times printed ("simulated ... in", "simulations in") vary from
# run to run; every other figure is the same bit for bit.
