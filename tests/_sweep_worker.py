"""Worker for the multi-device and multi-process tests: runs the same seed sweep on meshes of several
sizes and saves draws and Monte Carlo results. Usage: python tests/_sweep_worker.py OUT.npz [SIZES...]

Environment decides the devices (XLA_FLAGS host device count) and processes (PBE_DISTRIBUTED etc.).
"""

import os
import sys

import numpy as np

from sims import runtime

runtime.setup()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from theory import seesaw as th  # noqa: E402


def main(out, sizes):
    assert jax.config.jax_enable_x64 and jnp.zeros(()).dtype == jnp.float64, "float64 must be on"
    eigs = jnp.asarray(th.power_law_eigs(8))
    lrs, bs = th.phase_schedule(0.5, 2, 2.0, 1.0, 64, 2)
    res = {"device_count": np.asarray(jax.device_count()), "process_count": np.asarray(jax.process_count()),
           "xla_flags": np.asarray(os.environ.get("XLA_FLAGS", ""))}
    for n in sizes:
        mesh = runtime.make_mesh(n)
        draws = runtime.map_seeds(lambda k: jax.random.normal(k, (5,)), 3, 13, mesh=mesh)
        paths = runtime.map_seeds(lambda k: th.sgd_risk_path(k, eigs, jnp.ones(8), 1.0, lrs, bs), 3, 13,
                                  mesh=mesh)
        mean, se = runtime.mean_over_seeds(
            lambda k: th.sgd_risk_path(k, eigs, jnp.ones(8), 1.0, lrs, bs)[-1], 3, 13, mesh=mesh)
        res[f"draws{n}"], res[f"paths{n}"], res[f"mean{n}"], res[f"se{n}"] = draws, paths, mean, se
    if runtime.is_writer():
        np.savez(out, **res)


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]] or [1])
