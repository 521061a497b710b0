#!/usr/bin/python3
"""Per-request results and a summary from one SplitwiseSim run directory.

Usage: collect.py RUN_DIR TRACE.csv OUT_PREFIX

Reads RUN_DIR/detailed/0.csv (SplitwiseSim's per-request metrics of
application 0), RUN_DIR/request_nodes.csv (start and end of each request's
prompt task, KV-cache transfer flow and token task) and the trace it ran on,
and writes

  OUT_PREFIX.requests.csv  one row a request, in request_id order:
    request_id, arrival (s, as in the trace), prompt_tokens, output_tokens,
    ttft (s, first token - arrival: SplitwiseSim's TTFT, the prompt task's
    completion), e2e (s, last token - arrival: its router_response_time),
    queue_time (s, prompt start - arrival), tbt ((e2e - ttft) / output_tokens,
    SplitwiseSim's tbt_times), nth_token_overhead (token task start - prompt
    task end: the KV transfer and the wait for a decode slot),
    prompt_start, prompt_end, prompt_instance, kv_start, kv_end (empty when
    the request did not move), token_start, token_end, token_instance
    (instances named <processor>_<instance id>).
  OUT_PREFIX.summary.csv   metric,count,mean,p50,p90,p99,max for ttft, e2e,
    queue_time, tbt, nth_token_overhead (percentiles: numpy's linear, as
    SplitwiseSim's utils.get_statistics), plus completed/requests counts.

Exits non-zero if a request of the trace is missing from the results.
"""

import sys

import numpy as np
import pandas as pd


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    run_dir, trace_csv, prefix = sys.argv[1:]
    trace = pd.read_csv(trace_csv)
    det = pd.read_csv(f"{run_dir}/detailed/0.csv")
    nodes = pd.read_csv(f"{run_dir}/request_nodes.csv")

    det = det.rename(columns={
        "request_ids": "request_id", "response_times": "e2e",
        "queue_times": "queue_time", "ttft_times": "ttft", "tbt_times": "tbt",
        "nth_token_overheads": "nth_token_overhead"})
    det["request_id"] = det["request_id"].astype(int)
    det = det.drop(columns=["prompt_sizes", "token_sizes"])

    nodes["request_id"] = nodes["request_id"].astype(int)
    parts = []
    for kind, name in (("PROMPT", "prompt"), ("KVCacheTransfer", "kv"),
                       ("TOKEN", "token")):
        n = nodes[nodes.node_type == kind].set_index("request_id")
        cols = {"start_timestamp": f"{name}_start",
                "completion_timestamp": f"{name}_end"}
        if name != "kv":
            cols["runner"] = f"{name}_instance"
        parts.append(n[list(cols)].rename(columns=cols))
    per_node = pd.concat(parts, axis=1)

    out = trace.rename(columns={"arrival_timestamp": "arrival",
                                "prompt_size": "prompt_tokens",
                                "token_size": "output_tokens"})
    out = out[["request_id", "arrival", "prompt_tokens", "output_tokens"]]
    out = out.merge(det, on="request_id", how="left")
    out = out.merge(per_node, left_on="request_id", right_index=True,
                    how="left")
    cols = ["request_id", "arrival", "prompt_tokens", "output_tokens", "ttft",
            "e2e", "queue_time", "tbt", "nth_token_overhead", "prompt_start",
            "prompt_end", "prompt_instance", "kv_start", "kv_end",
            "token_start", "token_end", "token_instance"]
    out = out[cols].sort_values("request_id")
    out.to_csv(f"{prefix}.requests.csv", index=False)

    missing = out["e2e"].isna().sum()
    rows = []
    for m in ("ttft", "e2e", "queue_time", "tbt", "nth_token_overhead"):
        v = out[m].dropna().to_numpy()
        rows.append({"metric": m, "count": len(v), "mean": v.mean(),
                     "p50": np.percentile(v, 50), "p90": np.percentile(v, 90),
                     "p99": np.percentile(v, 99), "max": v.max()})
    summ = pd.DataFrame(rows)
    summ.to_csv(f"{prefix}.summary.csv", index=False)
    print(f"{prefix}: {len(out) - missing}/{len(out)} requests completed")
    with pd.option_context("display.width", 200, "display.precision", 6):
        print(summ.to_string(index=False))
    if missing:
        sys.exit(f"collect: {missing} requests of the trace have no result")


if __name__ == "__main__":
    main()
