#!/usr/bin/env python3
"""Load a Drover checkpoint with numpy alone and check its probe.

Usage: python3 scripts/check_checkpoint.py CHECKPOINT_DIR

Parses weights.safetensors by hand (8-byte little-endian header length, JSON
header, raw float32 data; docs/format/checkpoint-weights.md), rebuilds each
network listed in meta.json (Linear layers "<net>.<i>.weight" of shape
[out, in] and "<net>.<i>.bias", the activation after every hidden layer, as
torch.nn.Sequential), runs the probe inputs through it in float32 and exits 1
unless every output is within 1e-5 of the one Drover recorded (see mismatch).
"""
import json
import struct
import sys

import numpy as np


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{name}: dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(body[begin:end], dtype="<f4").reshape(info["shape"])
    return tensors


def forward(tensors, net, activation, x):
    layer = 0
    h = x.astype(np.float32)
    while f"{net}.{layer}.weight" in tensors:
        w, b = tensors[f"{net}.{layer}.weight"], tensors[f"{net}.{layer}.bias"]
        h = (h @ w.T + b).astype(np.float32)
        if f"{net}.{layer + 2}.weight" in tensors:  # a hidden layer: activation follows
            h = np.tanh(h) if activation == "tanh" else np.maximum(h, 0)
            layer += 2
        else:
            break
    return h


TOL = 1e-5


def mismatch(got, want):
    """The largest difference between got and want, absolute for outputs of
    magnitude up to 1 and relative above: float32 resolves a value near v only
    to about 6e-8 * |v| (one unit in the last place of 100 is 7.6e-6, of 200
    1.5e-5), so two correct float32 forward passes summing in different
    orders can differ by more than 1e-5 in a large output, a value estimate
    near 500 for instance."""
    d = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return float(np.max(d / np.maximum(1.0, np.abs(want.astype(np.float64)))))


def main(d):
    meta = json.load(open(f"{d}/meta.json"))
    tensors = load_safetensors(f"{d}/weights.safetensors")
    x = np.array(meta["probe"]["inputs"], dtype=np.float32)
    worst = 0.0
    for net in meta["networks"]:
        got = forward(tensors, net, meta["activation"], x)
        want = np.array(meta["probe"]["outputs"][net], dtype=np.float32)
        worst = max(worst, mismatch(got, want))
    ok = worst <= TOL
    print(f"{d}: {len(meta['networks'])} networks, max |numpy - drover| (relative above 1) = {worst:.3g}: {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
