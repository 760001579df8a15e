"""Worker for the Ctrl-C test: ``python -m sims.<paper>``'s command line (:func:`sims.cli.main`) on a toy
simulation ``sims.toy_wait`` with two resumable pieces; while ``PBE_TEST_BLOCK=1`` piece ``b`` waits (up to
120 s) so that the test can interrupt the run after piece ``a`` was stored. Usage:
``python tests/_interrupt_worker.py --config CONFIG --out DIR`` (the config names ``sim: toy_wait``).
"""

import dataclasses
import os
import sys
import time
import types

import numpy as np

from sims import cli
from sims.config import param


@dataclasses.dataclass(frozen=True)
class WaitParams:
    n: int = param(4, ge=1)


def run(p: WaitParams, ctx: cli.Context) -> dict:
    """Arrays: ``x [n]`` (piece ``a``: ``arange(n)``) and ``y [n]`` (piece ``b``: ``x**2``)."""
    a = ctx.parts.get("a", lambda: {"x": np.arange(p.n, dtype=np.float64)})

    def piece_b():
        if os.environ.get("PBE_TEST_BLOCK") == "1":
            time.sleep(120)  # interrupted by the test; never reached in a rerun
        return {"y": a["x"] ** 2}

    return {"x": a["x"], "y": ctx.parts.get("b", piece_b)["y"]}


module = types.ModuleType("sims.toy_wait")
module.EXPERIMENTS = {"wait": cli.Experiment(WaitParams, run)}
sys.modules["sims.toy_wait"] = module

if __name__ == "__main__":
    sys.exit(cli.main("sims.toy_wait", sys.argv[1:]))
