"""hydra.utils stand-ins: instantiate, get_original_cwd, to_absolute_path.

instantiate follows hydra-core 1.3's _instantiate2.py with its defaults
(_recursive_=True, _convert_="none"): the config is copied and resolved, the
keyword arguments given to instantiate are added to (and win over) the
config's keys, nested configs with a _target_ are instantiated first, nested
configs without one are passed on as OmegaConf DictConfig/ListConfig (so
SplitwiseSim reads e.g. executor_overheads.submit_task from a DictConfig, as
it does under Hydra), and objects passed as keyword arguments are passed by
reference.
"""

import copy
import importlib
import os

from omegaconf import OmegaConf

_original_cwd = None

_SPECIAL = ("_target_", "_recursive_", "_convert_", "_partial_", "_args_")


def get_original_cwd():
    """The directory the program started in (before the run dir chdir)."""
    if _original_cwd is None:
        raise ValueError("GlobalHydra is not initialized, use @hydra.main()")
    return _original_cwd


def to_absolute_path(path):
    """path made absolute against the original working directory."""
    if os.path.isabs(path):
        return path
    base = _original_cwd if _original_cwd is not None else os.getcwd()
    return os.path.join(base, path)


def _locate(path):
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    return importlib.import_module(path)


def _node(value):
    if OmegaConf.is_dict(value):
        if "_target_" in value:
            return _call(value, (), {})
        out = OmegaConf.create({}, flags={"allow_objects": True})
        for k in value.keys():
            out[k] = _node(value[k])
        return out
    if OmegaConf.is_list(value):
        items = [_node(v) for v in value]
        return OmegaConf.create(items, flags={"allow_objects": True})
    return value


def _call(cfg, args, kwargs):
    target = cfg["_target_"]
    if not callable(target):
        target = _locate(target)
    call_kwargs = {}
    for k in cfg.keys():
        if k in _SPECIAL or k in kwargs:
            continue
        call_kwargs[k] = _node(cfg[k])
    call_kwargs.update(kwargs)
    return target(*args, **call_kwargs)


def instantiate(config, *args, **kwargs):
    """Builds the object config["_target_"] names, as Hydra's instantiate."""
    if config is None:
        return None
    if isinstance(config, dict):
        config = OmegaConf.create(config, flags={"allow_objects": True})
    if not OmegaConf.is_dict(config):
        raise ValueError("hydra stand-in: instantiate needs a dict config")
    cfg = copy.deepcopy(config)
    cfg._set_flag("readonly", False)
    cfg._set_flag("struct", False)
    cfg._set_parent(config._get_parent())
    OmegaConf.resolve(cfg)
    if "_target_" not in cfg:
        raise ValueError("hydra stand-in: config has no _target_")
    return _call(cfg, args, kwargs)
