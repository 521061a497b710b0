"""Hydra's config composition, the subset SplitwiseSim's configs use.

compose(config_dir, config_name, overrides) returns (cfg, run_dir, choices):

- The primary config's defaults list is read in order. An entry
  "group: option" loads <config_dir>/<group>/<option>.yaml (or .yml) and
  places it at the key named by the group (router/overheads at
  router.overheads); a config that has its own defaults list (router/noop.yaml)
  composes its subgroups the same way. "_self_" marks where the config's own
  keys are merged; without it they are merged after the defaults, as in
  Hydra 1.1+. Entries for Hydra's own groups (hydra/...,
  "override hydra/launcher: ray") are skipped.
- A command-line override "group=option" (where group is a config group of
  the defaults list, e.g. cluster=half_half, start_state=splitwise) changes
  that group's choice before composing; "key.path=value" (e.g.
  applications.0.scheduler=token_jsq, cluster.servers.1.count=2) sets a value
  after composing; "+key=value" adds a key; "~key" deletes one. Values are
  parsed as Hydra's override grammar parses primitives: int, float,
  true/false (any case), null, [a,b] lists, otherwise a string (quotes
  stripped).
- "hydra.run.dir=DIR" sets the run directory; otherwise it is the config's
  hydra.run.dir, which in SplitwiseSim is ${output_dir}, resolved against
  the composed config. Other hydra.* overrides are ignored.
- The resolver ${hydra:runtime.choices} (config.yaml's "choices" key)
  answers with the group choices.

Not supported (an error says so): "@package" directives other than the
default, +group=option for groups with "# @package _global_" (the
experiment/ configs of sweeps), interpolated defaults, multirun.
"""

import os
import re

from omegaconf import OmegaConf, ListConfig

_choices = {}


def _hydra_resolver(path):
    node = {"runtime": {"choices": dict(_choices)}}
    for part in path.split("."):
        node = node[part]
    return node


if not OmegaConf.has_resolver("hydra"):
    OmegaConf.register_new_resolver("hydra", _hydra_resolver)


def _find(config_dir, group, name):
    for ext in (".yaml", ".yml"):
        p = os.path.join(config_dir, group, name + ext)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(
        f"hydra stand-in: no config '{name}' in group '{group}' ({config_dir})")


def _is_group(config_dir, group):
    return os.path.isdir(os.path.join(config_dir, group))


def _load(path):
    with open(path) as f:
        head = f.readline()
    if head.startswith("# @package") and "_global_" in head:
        raise NotImplementedError(
            f"hydra stand-in: @package _global_ configs are not supported ({path})")
    return OmegaConf.load(path)


def _parse_defaults(cfg):
    """[(group or None for _self_, option, optional package)]"""
    out = []
    if not OmegaConf.is_dict(cfg) or "defaults" not in cfg:
        return out, cfg
    for entry in cfg.defaults:
        if isinstance(entry, str):
            if entry == "_self_":
                out.append((None, None))
                continue
            raise NotImplementedError(
                f"hydra stand-in: defaults entry '{entry}' (a config without a group)")
        (key, option), = entry.items()
        key = key.strip()
        if key.startswith("override "):
            key = key[len("override "):].strip()
        if key.startswith("optional "):
            key = key[len("optional "):].strip()
        if "@" in key:
            raise NotImplementedError(f"hydra stand-in: package in defaults '{key}'")
        out.append((key, option))
    rest = OmegaConf.masked_copy(cfg, [k for k in cfg.keys() if k != "defaults"])
    return out, rest


def _compose_group(config_dir, group, option, choices):
    """The merged config of one group option, with its own defaults."""
    if option is None:
        return None
    path = _find(config_dir, group, str(option))
    cfg = _load(path)
    if OmegaConf.is_list(cfg):
        return cfg
    defaults, own = _parse_defaults(cfg)
    return _merge_defaults(config_dir, group, defaults, own, choices)


def _merge_defaults(config_dir, group, defaults, own, choices):
    parts = []
    seen_self = False
    for sub, option in defaults:
        if sub is None:
            parts.append(("self", own))
            seen_self = True
            continue
        full = f"{group}/{sub}" if group else sub
        if full.split("/")[0] == "hydra":
            continue
        option = choices.get(full, option)
        choices[full] = option
        sub_cfg = _compose_group(config_dir, full, option, choices)
        parts.append((sub, sub_cfg))
    if not seen_self:
        parts.append(("self", own))
    result = OmegaConf.create({})
    for key, part in parts:
        if part is None:
            continue
        if key == "self":
            if OmegaConf.is_list(part):
                return part
            result = OmegaConf.merge(result, part)
        else:
            wrapped = part
            for k in reversed(key.split("/")):
                wrapped = {k: wrapped}
            result = OmegaConf.merge(result, OmegaConf.create(wrapped))
    return result


_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$")


def parse_value(s):
    """A Hydra override value: int, float, bool, null, list or string."""
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    if s.startswith("[") and s.endswith("]"):
        inner = s[1:-1].strip()
        return [] if not inner else [parse_value(x) for x in inner.split(",")]
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if _INT.match(s):
        return int(s)
    if _FLOAT.match(s) or low in ("inf", "-inf", "+inf", "nan"):
        return float(s)
    return s


def compose(config_dir, config_name, overrides):
    primary = _load(os.path.join(config_dir, config_name + ".yaml"))
    defaults, own = _parse_defaults(primary)
    groups = {g for g, _ in defaults if g is not None}

    choices = {}
    value_overrides = []
    run_dir = None
    for o in overrides:
        if o.startswith("~"):
            value_overrides.append(("del", o[1:].split("=")[0], None))
            continue
        if "=" not in o:
            raise ValueError(f"hydra stand-in: cannot parse override '{o}'")
        key, val = o.split("=", 1)
        add = key.startswith("+")
        key = key.lstrip("+")
        if key == "hydra.run.dir":
            run_dir = val
            continue
        if key.startswith("hydra.") or key.startswith("hydra/"):
            continue
        if key in groups or (add and _is_group(config_dir, key)):
            if add and key not in groups:
                # +group=option appends a group to the defaults list
                defaults.insert(len(defaults) - 1 if defaults and defaults[-1][0] is None
                                else len(defaults), (key, val))
                groups.add(key)
            choices[key] = val
            continue
        value_overrides.append(("add" if add else "set", key, parse_value(val)))

    cfg = _merge_defaults(config_dir, "", defaults, own, choices)
    for op, key, val in value_overrides:
        if op == "del":
            parent, _, leaf = key.rpartition(".")
            node = OmegaConf.select(cfg, parent) if parent else cfg
            del node[int(leaf) if isinstance(node, ListConfig) else leaf]
            continue
        if op == "set" and OmegaConf.select(cfg, key, default="__missing__") == "__missing__":
            raise KeyError(f"hydra stand-in: could not override '{key}': "
                           f"no such key (use +{key}=... to add one)")
        OmegaConf.update(cfg, key, val, merge=True, force_add=(op == "add"))

    _choices.clear()
    _choices.update(choices)
    if run_dir is None:
        hydra_node = primary.get("hydra")
        hydra_run = None
        if hydra_node is not None and "run" in hydra_node:
            # the raw string, e.g. "${output_dir}", not resolved here
            hydra_run = hydra_node.run._get_node("dir")._value()
        if hydra_run is None:
            raise ValueError("hydra stand-in: no hydra.run.dir")
        # hydra.run.dir is "${output_dir}" in SplitwiseSim: resolve it
        # against the composed config.
        tmp = OmegaConf.merge(cfg, {"__run_dir__": hydra_run})
        run_dir = str(tmp.__run_dir__)
    # The task's config has no hydra node (Hydra removes it).
    if "hydra" in cfg:
        cfg = OmegaConf.masked_copy(cfg, [k for k in cfg.keys() if k != "hydra"])
    return cfg, run_dir, choices
