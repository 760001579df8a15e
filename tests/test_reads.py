"""``claims.reads``: what a check is handed, and which non-finite values it read (``non_finite_read``), checked
with fabricated results whose sidecars count their non-finite values as ``sims.cli`` does."""

from __future__ import annotations

import numpy as np

from claims import ledger
from claims.reads import non_finite_read

NAN_SEEDS = np.array([1.0, 1.2, np.nan, 0.9, 1.1])


def _result():
    """A figure result with a per-seed array holding one NaN (a diverged run), counted in its sidecar, and a
    finite array."""
    arrays = {"d": NAN_SEEDS, "clean": np.ones(5)}
    return ledger.FigureResult(arrays, {"seed_axes": {"d": 0, "clean": 0}, "non_finite": {"d": 1}})


def _statistics(ev):
    return [d.statistic for d in ev.decisions] + [c.decision.statistic for c in ev.controls]


def _check(reduce):
    def check(r):
        d = reduce(r["toy_fig"].arrays["d"])
        return ledger.Evidence({"mean": float(np.mean(d))}, {}, "t", [ledger.paired("mean > 0", d, 0.0, "above")],
                               no_control="a fabricated test claim")
    return ledger.Claim("toyreads.mean_positive", "test", "x", check, reads=("toy_fig",))


def test_a_check_that_leaves_the_nan_out_is_recorded_as_excluding_it():
    reads = ledger.Reads({"toy_fig": _result()})
    ev = _check(lambda d: d[np.isfinite(d)]).decide(reads)
    assert ev.verdict == "holds"
    assert non_finite_read(reads, _statistics(ev)) == {"arrays": {"toy_fig.d": 1}, "excluded": True}


def test_a_check_that_averages_the_nan_in_is_recorded_as_not_excluding_it_and_is_not_decided():
    reads = ledger.Reads({"toy_fig": _result()})
    ev = _check(lambda d: d).decide(reads)
    assert ev.verdict == "inconclusive"
    nf = non_finite_read(reads, _statistics(ev))
    assert nf == {"arrays": {"toy_fig.d": 1}, "excluded": False}
    assert "came out non-finite" in ledger.fmt_non_finite(nf) and "toy_fig: d 1" in ledger.fmt_non_finite(nf)


def test_an_array_the_check_never_looked_up_is_not_reported():
    def clean_only(r):
        d = r["toy_fig"].arrays.get("clean")
        return ledger.Evidence({}, {}, "t", [ledger.paired("mean > 0", d, 0.0, "above")], no_control="test")
    reads = ledger.Reads({"toy_fig": _result()})
    ev = ledger.Claim("toyreads.clean", "test", "x", clean_only, reads=("toy_fig",)).decide(reads)
    assert reads.seen == {("toy_fig", "clean")} and non_finite_read(reads, _statistics(ev)) is None
    assert ledger.fmt_non_finite(None) == ""


def test_the_text_says_left_out_with_each_array_and_count_by_figure():
    nf = {"arrays": {"a.x": 3, "a.y": 1, "b.z": 2}, "excluded": True}
    assert ledger.fmt_non_finite(nf) == ("non-finite values read, left out by the check (every decision finite): "
                                         "a: x 3, y 1; b: z 2")


def test_the_ledger_run_records_it_in_the_outcome_and_its_json(monkeypatch):
    monkeypatch.setattr(ledger, "figure_result", lambda name, scale, seed_offset=0: tuple(_result()))
    (o,) = ledger.run([_check(lambda d: d[np.isfinite(d)])])
    assert o.non_finite == {"arrays": {"toy_fig.d": 1}, "excluded": True}
    assert o.to_dict()["non_finite"] == o.non_finite
    assert "non-finite values read, left out" in ledger.to_markdown([o])
