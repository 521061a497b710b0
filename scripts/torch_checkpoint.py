#!/usr/bin/env python3
"""Load a Drover checkpoint into PyTorch modules and check its probe.

Usage: /usr/bin/python3 scripts/torch_checkpoint.py CHECKPOINT_DIR

Needs numpy and torch (Debian: apt-get install python3-torch). The weights
file is parsed with numpy by scripts/check_checkpoint.py's reader (no
safetensors package needed). Each network listed in meta.json is rebuilt as a
torch.nn.Sequential of torch.nn.Linear layers with the metadata's activation
(torch.nn.Tanh or torch.nn.ReLU) after every hidden layer, at the indices the
tensor names give ("<net>.<i>.weight", counting activations as Sequential
does), and its weights are loaded with load_state_dict(strict=True). The
probe inputs are run through each module in float32; the script prints the
largest |torch - drover| and |torch - numpy| differences (relative for
outputs above 1 in magnitude: check_checkpoint.mismatch) and exits 1 unless
both are within 1e-5 (2 on a malformed checkpoint).
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_checkpoint import forward as numpy_forward  # noqa: E402
from check_checkpoint import TOL, load_safetensors, mismatch  # noqa: E402

ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def build(tensors, net, activation, obs_dim, out_dim):
    """Returns net as a torch.nn.Sequential holding the checkpoint's weights."""
    prefix = net + "."
    indices = sorted({int(k[len(prefix):].split(".")[0]) for k in tensors if k.startswith(prefix)})
    if not indices or indices != list(range(0, 2 * len(indices), 2)):
        raise ValueError(f"{net}: layer indices {indices}, want 0, 2, 4, ...")
    layers = []
    for n, i in enumerate(indices):
        w = tensors[f"{net}.{i}.weight"]
        out_f, in_f = w.shape
        layers.append(torch.nn.Linear(in_f, out_f))
        if n + 1 < len(indices):
            layers.append(ACTIVATIONS[activation]())
    model = torch.nn.Sequential(*layers)
    state = {k[len(prefix):]: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in tensors.items() if k.startswith(prefix)}
    model.load_state_dict(state, strict=True)
    if layers[0].in_features != obs_dim or layers[-1].out_features != out_dim:
        raise ValueError(f"{net}: {layers[0].in_features} -> {layers[-1].out_features}, want {obs_dim} -> {out_dim}")
    return model.float().eval()


def main(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    tensors = load_safetensors(os.path.join(d, "weights.safetensors"))
    act = meta["activation"]
    if act not in ACTIVATIONS:
        print(f"{d}: unknown activation {act!r}")
        return 2
    x = np.array(meta["probe"]["inputs"], dtype=np.float32)
    worst_drover = worst_numpy = 0.0
    for net in meta["networks"]:
        out_dim = 1 if net in ("critic", "value") else meta["actions"]
        try:
            model = build(tensors, net, act, meta["obs_dim"], out_dim)
        except (KeyError, ValueError, RuntimeError) as e:
            print(f"{d}: {e}")
            return 2
        with torch.no_grad():
            got = model(torch.from_numpy(x)).numpy()
        want = np.array(meta["probe"]["outputs"][net], dtype=np.float32)
        ref = numpy_forward(tensors, net, act, x)
        worst_drover = max(worst_drover, mismatch(got, want))
        worst_numpy = max(worst_numpy, mismatch(got, ref))
    ok = worst_drover <= TOL and worst_numpy <= TOL
    print(f"{d}: torch {torch.__version__}, {len(meta['networks'])} networks ({act}), "
          f"max |torch - drover| = {worst_drover:.3g}, max |torch - numpy| = {worst_numpy:.3g} (relative above 1): "
          f"{'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
