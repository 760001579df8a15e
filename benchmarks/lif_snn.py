"""LIF-SNN benchmarks: the Walsh–Hadamard transform plus exact noise sensitivity (``theory.boolean``) against
the peer library ``boofun`` (PyPI) and against the dense O(4^n) definition, and sharded random-network
ensembles on one device against all devices.

The peer library is optional and never a dependency of the project: it is imported only when installed
in a location apart named by ``PBE_PEER_PATH`` (default ``build/peer``, where ``make bench`` installs it:
``pip install --target build/peer boofun``), appended to the end of ``sys.path`` so that the project's
numpy and scipy win. Without it the peer rows say so and are skipped.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
import warnings
from pathlib import Path

import jax
import numpy as np

from benchmarks.timing import timed
from sims import lif_snn as sim
from sims import runtime
from theory import boolean

PEER_PATH = os.environ.get("PBE_PEER_PATH", str(Path(__file__).resolve().parents[1] / "build" / "peer"))
PEER_MAX_N = 20  # boofun takes ~18 s at n = 20 on 2 cores and ~4x per two more bits
DELTA = 0.1


def _peer():
    """The ``boofun`` module, or ``None`` with the reason."""
    if PEER_PATH and os.path.isdir(PEER_PATH) and PEER_PATH not in sys.path:
        sys.path.append(PEER_PATH)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module("boofun"), ""
    except ImportError as e:
        return None, f"boofun not importable ({e}); pip install --target {PEER_PATH} boofun"


def _ours(table):
    """Transform plus exact NS_delta (the pair the targets name)."""
    return boolean.walsh_hadamard(table), boolean.noise_sensitivity(table, DELTA)


def _dense(table: np.ndarray) -> tuple[np.ndarray, float]:
    """The definitions, O(4^n): fhat(S) = 2^-n sum_x f(x) chi_S(x) as one matrix product, and NS_delta as
    the double sum over (x, y) of P[y | x] 1[f(x) != f(y)]."""
    n = table.size.bit_length() - 1
    k = np.arange(table.size, dtype=np.uint64)
    chi = 1.0 - 2.0 * (np.bitwise_count(k[:, None] & k[None, :]) & 1)
    dist = np.bitwise_count(k[:, None] ^ k[None, :]).astype(np.float64)
    p = DELTA**dist * (1 - DELTA) ** (n - dist)
    return chi @ table / table.size, float(np.sum(p * (table[:, None] != table[None, :])) / table.size)


def _peer_run(bf, table: np.ndarray):
    f = bf.create((table < 0).astype(np.int8))  # boofun: truth table in {0, 1}, 1 <-> -1 (same indexing)
    c = np.asarray(f.fourier(), np.float64)
    return c, 0.5 - 0.5 * float(f.noise_stability(1 - 2 * DELTA))


def run() -> list[dict]:
    rows = []
    bf, why = _peer()
    for n in (16, 20, 22):
        table = boolean.random_function(jax.random.key(n), n)
        (coef, ns), t_ours = timed(lambda t=table: _ours(t), repeat=3)
        row = {"benchmark": "lif_snn WHT + exact NS_0.1", "case": f"random function, n={n}",
               "ours": "theory.boolean (jit FWHT)", "ours_s": t_ours}
        if bf is None or n > PEER_MAX_N:
            reason = why or (f"not run: boofun needs ~{18 * 4 ** ((n - 20) / 2):.0f} s at n = {n} "
                             f"(~18 s at n = 20, x4 per two bits), over this benchmark's minute")
            rows.append(row | {"baseline": "boofun", "baseline_s": float("nan"), "ratio": float("nan"),
                               "check": reason + (f"; target n=20 < 1 s: {'met' if t_ours < 1 else 'MISSED'}"
                                                  if n == 20 else "")})
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            pc, pns = _peer_run(bf, table)
            t_peer = time.perf_counter() - t0
        agree = max(float(np.max(np.abs(pc - coef))), abs(pns - ns))
        rows.append(row | {"baseline": f"boofun {getattr(bf, '__version__', '?')} (fourier + noise_stability)",
                           "baseline_s": t_peer, "ratio": t_peer / t_ours,
                           "check": f"max |diff| {agree:.1e} ({'<=' if agree <= 1e-12 else '>'} 1e-12); >= 10x: "
                                    f"{'met' if t_peer / t_ours >= 10 else 'MISSED'}"
                                    + (f"; n=20 < 1 s: {'met' if t_ours < 1 else 'MISSED'}" if n == 20 else "")})
    for n in (8, 12):
        table = boolean.random_function(jax.random.key(100 + n), n)
        (dc, dns), t_dense = timed(lambda t=table: _dense(t), repeat=1, warmup=0)
        (coef, ns), t_ours = timed(lambda t=table: _ours(t), repeat=3)
        agree = max(float(np.max(np.abs(dc - coef))), abs(dns - ns))
        rows.append({"benchmark": "lif_snn WHT + exact NS_0.1", "case": f"random function, n={n}",
                     "baseline": "dense O(4^n) definition", "baseline_s": t_dense, "ours": "theory.boolean",
                     "ours_s": t_ours, "ratio": t_dense / t_ours,
                     "check": f"max |diff| {agree:.1e} ({'<=' if agree <= 1e-12 else '>'} 1e-12)"})
    # Sharded random-network ensembles: one device against all devices, same networks.
    p = sim.DepthParams(widths=(256,), max_depth=3, T=5, n_networks=64, pairs=32, networks_per_call=64,
                        fixed_nu=0.0)
    nu = 1 / math.sqrt(256)

    def ens(mesh):
        return runtime.map_seeds(lambda k: sim.depth_network(k, n=256, nu=nu, p=p, kind="slif")["disagree"],
                                 0, p.n_networks, mesh=mesh)

    r1, t1 = timed(lambda: ens(runtime.make_mesh(1)), repeat=2)
    rn, tn = timed(lambda: ens(runtime.make_mesh()), repeat=2)
    rows.append({"benchmark": "lif_snn random sIF ensembles (networks/s)",
                 "case": f"{p.n_networks} nets n=256, L=1..3, T=5, {p.pairs} pairs",
                 "baseline": f"1 device {p.n_networks / t1:.3g}/s", "baseline_s": t1,
                 "ours": f"{jax.device_count()} devices {p.n_networks / tn:.3g}/s", "ours_s": tn, "ratio": t1 / tn,
                 "check": f"same draws: max |diff| {float(np.max(np.abs(np.asarray(r1) - np.asarray(rn)))):.1e}"})
    return rows
