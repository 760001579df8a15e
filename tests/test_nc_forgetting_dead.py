"""NC forgetting's buffer-statistics claims when a network died (every last-layer unit off: NaN statistics,
flagged in ``dead_runs`` by the simulation): the dead seed is left out of the paired comparisons and named;
the same NaN without the flag is refused. On the synthetic results of tests/test_nc_forgetting_claims.py."""

import numpy as np
import pytest

from test_nc_forgetting_claims import (DATASETS, PB, STATS_AXES, STATS_MINORITY_AXES, decide, minority_result,
                                       stats)


def _kill(a: dict, d: int, b: int, n: int, flag: bool = True) -> dict:
    """``a`` with data set d's network of seed n at buffer b dead: its statistics NaN (as the simulation
    leaves them), flagged in ``dead_runs`` when ``flag``."""
    a = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in a.items()}
    for k, v in a.items():
        if k not in ("datasets", "buffer_percents", "dead_runs"):
            v[d, b, n] = np.nan
    a["dead_runs"][d, b, n] = flag
    return a


@pytest.mark.parametrize("claim, result", [("nc_forgetting.minority_features_shrink", minority_result()),
                                           ("nc_forgetting.minority_heads_converge", minority_result()),
                                           ("nc_forgetting.buffer_artifacts", stats()),
                                           ("nc_forgetting.buffer_strong_collapse", stats())])
def test_a_dead_network_is_left_out_and_named_but_unflagged_nan_is_refused(claim, result):
    """A seed whose network died at 1% (NaN statistics, flagged in dead_runs) is left out of the paired
    comparisons: the verdict is the healthy one and the notes name it. The same NaN without the flag is
    not a dead network: the decisions that read it refuse it (a non-finite difference: inconclusive), or,
    for NC1, whose NaN means fewer than two samples per class, leave that buffer out of the pool."""
    axes = STATS_MINORITY_AXES if "minority" in claim else STATS_AXES
    healthy = decide(claim, result, axes)
    dead = decide(claim, _kill(result, 1, 0, 2), axes)
    assert dead.verdict == healthy.verdict and "died" in dead.notes and "died" not in healthy.notes
    assert f"{DATASETS[1]} at {PB[0]:g}% seed 2" in dead.notes
    unflagged = decide(claim, _kill(result, 1, 0, 2, flag=False), axes)
    if claim == "nc_forgetting.buffer_strong_collapse":
        pooled = [d.name for d in unflagged.decisions if d.name.startswith(str(DATASETS[1]))]
        assert f"'{PB[0]:g}%'" not in pooled[0] and f"'{PB[1]:g}%'" in pooled[0]
    else:
        assert any(d.decision == "inconclusive" and "non-finite" in d.test for d in unflagged.decisions)

