"""A stand-in for the part of Hydra (hydra-core 1.3) that SplitwiseSim uses.

Debian has no hydra-core, so SplitwiseSim's run.py runs on this instead:
@hydra.main composes the config (configs/config.yaml, its defaults list and
the command line's overrides, see _compose.py), makes the run directory,
writes the composed config to <run dir>/.hydra/, changes into the run
directory (SplitwiseSim's config sets hydra.job.chdir) and calls the task
function with the DictConfig, as Hydra does. hydra.utils has instantiate,
get_original_cwd and to_absolute_path. Only what SplitwiseSim needs is
here: no multirun, launchers, sweepers or plugins.
"""

import functools
import inspect
import logging
import os
import sys

from omegaconf import OmegaConf

from . import _compose
from . import utils

__all__ = ["main", "utils"]


def main(config_path=None, config_name=None, version_base=None):
    """Decorates a task function f(cfg) the way hydra.main does."""
    def decorator(task):
        @functools.wraps(task)
        def wrapper():
            base = os.path.dirname(os.path.abspath(inspect.getfile(task)))
            config_dir = os.path.join(base, config_path)
            overrides = sys.argv[1:]
            if any(o in ("-m", "--multirun") for o in overrides):
                sys.exit("hydra stand-in: --multirun is not supported")
            cfg, run_dir, choices = _compose.compose(config_dir, config_name,
                                                     overrides)
            utils._original_cwd = os.getcwd()
            run_dir = os.path.join(utils._original_cwd, run_dir)
            os.makedirs(os.path.join(run_dir, ".hydra"), exist_ok=True)
            with open(os.path.join(run_dir, ".hydra", "config.yaml"), "w") as f:
                f.write(OmegaConf.to_yaml(cfg))
            with open(os.path.join(run_dir, ".hydra", "overrides.yaml"), "w") as f:
                f.write(OmegaConf.to_yaml(OmegaConf.create(list(overrides))))
            with open(os.path.join(run_dir, ".hydra", "choices.yaml"), "w") as f:
                f.write(OmegaConf.to_yaml(OmegaConf.create(choices)))
            os.chdir(run_dir)
            # Hydra's default job logging: INFO to the console and to
            # <run dir>/<job name>.log.
            fmt = "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
            logging.basicConfig(level=logging.INFO, format=fmt, handlers=[
                logging.StreamHandler(sys.stdout),
                logging.FileHandler(os.path.splitext(
                    os.path.basename(inspect.getfile(task)))[0] + ".log"),
            ])
            return task(cfg)
        return wrapper
    return decorator
