"""Progress bars (issue 19, item 1): a simulation longer than a few seconds shows one on stderr, and
``PBE_PROGRESS=0`` hides it. ``runtime.map_batch`` (so every ``map_seeds``) shows its calls when it makes
several; ``runtime.tracked`` shows a host loop's steps; the bars change no result."""

import re

import jax
import numpy as np

from sims import runtime


def _square(i):
    return i * i


def test_map_batch_shows_its_calls_when_it_makes_several(monkeypatch, capsys):
    monkeypatch.setenv("PBE_PROGRESS", "1")
    out = runtime.map_batch(_square, np.arange(16, dtype=np.int32))  # ceil(16 / 8) = 2 per call: 8 calls
    err = capsys.readouterr().err
    np.testing.assert_array_equal(out, np.arange(16) ** 2)
    assert re.search(r"_square: +0%.*\| 0/8 \[", err), err
    assert "call" in err
    runtime.map_batch(_square, np.arange(1, dtype=np.int32))  # one call: no bar
    assert capsys.readouterr().err == ""


def test_pbe_progress_0_hides_every_bar_and_the_numbers_do_not_change(monkeypatch, capsys):
    monkeypatch.setenv("PBE_PROGRESS", "1")
    shown = runtime.map_seeds(lambda k: jax.random.normal(k, (3,)), 4, 11)
    assert "0/6" in capsys.readouterr().err  # ceil(11 / 8) = 2 per call: 6 calls
    monkeypatch.setenv("PBE_PROGRESS", "0")
    hidden = runtime.map_seeds(lambda k: jax.random.normal(k, (3,)), 4, 11)
    assert list(runtime.tracked(range(3), "host loop")) == [0, 1, 2]
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(shown, hidden)


def test_tracked_yields_every_item_in_order_with_a_bar_of_their_count(monkeypatch, capsys):
    monkeypatch.setenv("PBE_PROGRESS", "1")
    items = ("b", "a", "c")
    assert list(runtime.tracked(items, "probes", unit="run")) == list(items)
    err = capsys.readouterr().err
    assert "probes" in err and "3/3" in err and "run" in err
    assert list(runtime.tracked([], "nothing")) == [] and capsys.readouterr().err == ""
