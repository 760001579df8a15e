"""What a claim's check is handed: :class:`Reads`, the results of the figures it declared, one
:class:`FigureResult` each; and :func:`non_finite_read`, which of the non-finite values counted in those
results' sidecars the check read, and whether any reached a decision."""

from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np

from claims.decisions import _finite


class FigureResult(NamedTuple):
    """One figure's result as a claim sees it: ``arrays`` (name -> numpy array) and ``meta`` (the
    sidecar: config, provenance, ``summary``, and ``seed_axes``: array name -> axis holding the seeds)."""

    arrays: dict
    meta: dict


class Reads(Mapping):
    """What a check is handed: the results of the figures its claim declared in ``reads=``, by name,
    and the run's ``scale`` and ``seed_offset`` (for a check that draws its own seeds).

    ``r[name]`` is a :class:`FigureResult` (unpacks as ``arrays, meta = r[name]``); the arrays the check
    looks up are recorded in ``seen`` (for :func:`non_finite_read`).

    Raises:
      KeyError: a figure the claim did not declare in ``reads=`` (the message names the claim).
    """

    def __init__(self, results: Mapping[str, FigureResult], scale: str = "quick", seed_offset: int = 0,
                 claim_id: str = "?"):
        self._results = {k: FigureResult(*v) for k, v in results.items()}
        self.scale, self.seed_offset, self.claim_id = scale, int(seed_offset), claim_id
        self.seen: set[tuple[str, str]] = set()  # (figure, array) pairs the check has looked up

    def __getitem__(self, name: str) -> FigureResult:
        if name not in self._results:
            raise KeyError(f"claim {self.claim_id} reads figure {name!r} without declaring it in reads= "
                           f"(declared: {', '.join(self._results) or 'none'})")
        fr = self._results[name]
        return FigureResult(_Tracked(fr.arrays, name, self.seen), fr.meta)

    def __iter__(self):
        return iter(self._results)

    def __len__(self):
        return len(self._results)

    def n_seeds(self) -> int:
        """The largest seed count over the arrays the sidecars name in ``seed_axes`` (0 when none)."""
        sizes = [np.shape(a.arrays[k])[ax] for a in self._results.values()
                 for k, ax in (a.meta.get("seed_axes") or {}).items() if k in a.arrays]
        return max(sizes, default=0)

    def without(self, drop) -> "Reads":
        """The same reads with the seeds ``drop`` (indices) removed from every array the sidecars name in
        ``seed_axes`` (indices beyond an array's seed count are ignored). Nothing is recomputed."""
        drop = np.asarray(drop, int)
        return self._drop(lambda n: drop[drop < n])

    def without_fold(self, k: int, folds: int) -> "Reads":
        """The same reads with fold ``k`` of ``folds`` left out, each result split over its own seed count
        (``np.array_split`` of its seed indices), so results with different seed counts lose the same
        share of their seeds."""
        return self._drop(lambda n: np.array_split(np.arange(n), folds)[k])

    def _drop(self, which) -> "Reads":
        out = {}
        for name, fr in self._results.items():
            axes = {k: ax for k, ax in (fr.meta.get("seed_axes") or {}).items() if k in fr.arrays}
            arrays = dict(fr.arrays)
            if axes:
                # one split per result (over its largest seed count), so its arrays stay aligned
                drop = which(max(np.shape(arrays[k])[ax] for k, ax in axes.items()))
                for k, ax in axes.items():
                    a = np.asarray(arrays[k])
                    arrays[k] = np.delete(a, drop[drop < a.shape[ax]], axis=ax)
            out[name] = FigureResult(arrays, fr.meta)
        return Reads(out, self.scale, self.seed_offset, self.claim_id)


class _Tracked(dict):
    """A result's arrays that record each name looked up (``a[k]`` or ``a.get(k)``) in ``seen``."""

    def __init__(self, arrays: Mapping, figure: str, seen: set):
        super().__init__(arrays)
        self._figure, self._seen = figure, seen

    def __getitem__(self, key):
        self._seen.add((self._figure, key))
        return super().__getitem__(key)

    def get(self, key, default=None):
        return self[key] if key in self else default


def non_finite_read(reads: Reads, statistics) -> dict | None:
    """The non-finite values a check read, and whether any reached a decision.

    Args:
      reads: the :class:`Reads` the check was handed (after it ran: ``reads.seen``).
      statistics: the statistics of its decisions and controls' decisions.
    Returns:
      ``None`` when no array it looked up holds a non-finite value (by the sidecars' ``non_finite``
      counts), else ``{"arrays": {"figure.array": count}, "excluded": bool}``: ``excluded`` is True when
      every statistic is finite, so the check left those values out (a decision refuses a non-finite
      value and reads "inconclusive", :mod:`claims.decisions`); False when one came out non-finite.
    """
    counts = {f"{fig}.{key}": int(n) for fig, fr in reads._results.items()
              for key, n in sorted((fr.meta.get("non_finite") or {}).items()) if (fig, key) in reads.seen and n}
    if not counts:
        return None
    return {"arrays": counts, "excluded": all(_finite(s) for s in statistics if _is_number(s))}


def _is_number(x) -> bool:
    """A statistic that is a number (or a numeric array); strings and None say nothing about finiteness."""
    try:
        return np.asarray(x).dtype.kind in "biufc"
    except Exception:  # noqa: BLE001 - an exact type numpy cannot hold (a Fraction) is a number, finite
        return False
