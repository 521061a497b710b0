#!/usr/bin/python3
"""Converts an Azure LLM inference trace (2023) to SplitwiseSim's trace CSV.

Usage: make_trace.py AZURE.csv OUT.csv [--shift S] [--minutes M]

The Azure file has TIMESTAMP,ContextTokens,GeneratedTokens, one request a
row in arrival order. The output has SplitwiseSim's columns (its README,
"Request Traces"): request_id (0, 1, ... in file order), request_type 2
(generative LLM), application_id 0, arrival_timestamp in seconds since the
first request plus S (default 1.0: SplitwiseSim fails on a request at t = 0,
see README.md), batch_size 1, prompt_size = ContextTokens, token_size =
GeneratedTokens. --minutes M keeps the requests that arrive in the first M
minutes (arrival_timestamp - S < 60 M). Times are written with Python's
shortest round-trip repr, so a reader gets the same float64 values.
"""

import argparse

import pandas as pd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("azure_csv")
    ap.add_argument("out_csv")
    ap.add_argument("--shift", type=float, default=1.0)
    ap.add_argument("--minutes", type=float, default=None)
    args = ap.parse_args()

    df = pd.read_csv(args.azure_csv)
    t = pd.to_datetime(df["TIMESTAMP"])
    if not t.is_monotonic_increasing:
        raise SystemExit("make_trace: TIMESTAMP is not in arrival order")
    offset = (t - t.iloc[0]).dt.total_seconds()
    out = pd.DataFrame({
        "request_id": range(len(df)),
        "request_type": 2,
        "application_id": 0,
        "arrival_timestamp": offset + args.shift,
        "batch_size": 1,
        "prompt_size": df["ContextTokens"].astype(int),
        "token_size": df["GeneratedTokens"].astype(int),
    })
    if args.minutes is not None:
        out = out[offset < 60 * args.minutes]
    out.to_csv(args.out_csv, index=False, float_format=None)
    print(f"{args.out_csv}: {len(out)} requests, "
          f"arrivals {out.arrival_timestamp.iloc[0]:.6f} .. "
          f"{out.arrival_timestamp.iloc[-1]:.6f} s")


if __name__ == "__main__":
    main()
