"""Results that cannot lie: per-scale folders, checked sidecars, locks, resume keyed by the full hash,
clear one-line errors. Each test reproduces a finding of the foundation review (issue 7, section 2) on
the toy simulation of ``conftest.py`` (no compilation)."""

import hashlib
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from claims import ledger
from conftest import run_main
from sims import cli, results

REPO = results.REPO


def _run(cfg, scale="quick", **kw):
    return cli.run_config(cfg, scale, quiet=True, **kw)


def test_quick_and_paper_results_live_apart_and_a_paper_result_survives_quick_runs_and_verify(
        toy_sim, tmp_path, monkeypatch):
    mod, write = toy_sim
    cfg = write("toy_fig", n=3, paper_n=7)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "CONFIGS", cfg.parent)
    monkeypatch.setattr(ledger, "RESULTS", tmp_path / "results")
    paper_arrays, paper_meta = _run(cfg, "paper")
    paper_npz = tmp_path / "results" / "paper" / "toy_fig.npz"
    before = paper_npz.read_bytes()
    # A later quick run and the quick ledger (which may compute quick results) leave the paper result alone.
    _run(cfg, "quick")
    claim = ledger.Claim("toy.n", "src", "s", lambda r: ledger.Evidence(
        {"n": int(r["toy_fig"].arrays["x"].size)}, {}, "exact", [ledger.check("read", True)], no_control="toy"),
        reads=("toy_fig",))
    quick = ledger.run([claim], scale="quick")[0]
    assert quick.evidence.measured["n"] == 3 and (tmp_path / "results" / "quick" / "toy_fig.npz").exists()
    assert paper_npz.read_bytes() == before
    paper = ledger.run([claim], scale="paper")[0]
    assert paper.evidence.measured["n"] == 7 and len(mod.calls) == 2   # loaded, not recomputed
    np.testing.assert_array_equal(ledger.figure_result("toy_fig", "paper")[0]["x"], paper_arrays["x"])


def test_paper_scale_claim_without_a_result_is_not_measured_and_not_computed(toy_sim, tmp_path, monkeypatch):
    mod, write = toy_sim
    cfg = write("toy_fig")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "CONFIGS", cfg.parent)
    monkeypatch.setattr(ledger, "RESULTS", tmp_path / "results")
    claim = ledger.Claim("toy.n", "src", "s", lambda r: ledger.Evidence(
        {"n": r["toy_fig"].arrays["x"].size}, {}, "exact", [ledger.check("read", True)], no_control="toy"),
        reads=("toy_fig",))
    out = ledger.run([claim], scale="paper")[0]
    assert out.verdict == ledger.NOT_MEASURED and out.ok and not out.as_expected
    assert "SCALE=paper" in out.not_measured and mod.calls == []
    assert "not measured" in ledger.summary([out]) and "Not measured at paper scale" in ledger.to_markdown([out])


def test_seed_offset_replicates_apart_and_leaves_default_results_byte_identical(toy_sim, tmp_path, monkeypatch):
    mod, write = toy_sim
    cfg = write("toy_fig", n=6)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "CONFIGS", cfg.parent)
    monkeypatch.setattr(ledger, "RESULTS", tmp_path / "results")
    base, meta = _run(cfg)
    quick = tmp_path / "results" / "quick"
    before = {p.name: p.read_bytes() for p in quick.iterdir() if p.is_file()}
    rep, rmeta = _run(cfg, seed_offset=1)
    assert (quick / "seed-offset-1" / "toy_fig.npz").exists() and rmeta["seed"] == meta["seed"] + 1
    assert rmeta["seed_offset"] == 1 and rmeta["seed_axes"] == {"s": 0} == meta["seed_axes"]
    assert not np.array_equal(base["s"], rep["s"])  # fresh draws
    np.testing.assert_array_equal(base["x"], rep["x"])  # what does not depend on the seed stays
    assert {p.name: p.read_bytes() for p in quick.iterdir() if p.is_file()} == before
    # the ledger reads the replication through the same route, and the default result is still current
    claim = ledger.Claim("toy.s", "src", "s", lambda r: ledger.Evidence(
        {"s0": float(r["toy_fig"].arrays["s"][0])}, {}, "", [ledger.check("read", True)], no_control="toy"),
        reads=("toy_fig",))
    o = ledger.run([claim], seed_offset=1)[0]
    assert o.evidence.measured["s0"] == rep["s"][0] and o.stability["total"] == 6 and o.seed_offset == 1
    assert ledger.run([claim])[0].evidence.measured["s0"] == base["s"][0] and len(mod.calls) == 2
    with pytest.raises(ValueError, match="seed_offset"):
        _run(cfg, seed_offset=-1)


def test_current_result_is_loaded_with_equal_arrays_not_recomputed(toy_sim, tmp_path):
    mod, write = toy_sim
    cfg = write(n=5, scale=2.5)
    first, meta = _run(cfg, outdir=tmp_path / "r")
    again, meta2 = _run(cfg, outdir=tmp_path / "r")
    assert len(mod.calls) == 1 and meta2["skipped"]
    assert sorted(first) == sorted(again)
    for k in first:
        np.testing.assert_array_equal(first[k], again[k])
        assert first[k].dtype == again[k].dtype


def test_sidecar_records_npz_sha256_and_array_names(toy_sim, tmp_path):
    _, write = toy_sim
    _run(write(), outdir=tmp_path / "r")
    npz, js = results.paths("toy", tmp_path / "r" / "quick")
    meta = json.loads(js.read_text())
    assert meta["npz_sha256"] == hashlib.sha256(npz.read_bytes()).hexdigest()
    assert meta["arrays"] == ["s", "x", "y"] and meta["scale"] == "quick" and meta["seed_axes"] == {"s": 0}


def test_npz_replaced_without_its_sidecar_is_not_current_and_is_recomputed(toy_sim, tmp_path):
    """A run killed between the two writes leaves a new npz beside the old sidecar."""
    mod, write = toy_sim
    cfg = write()
    _run(cfg, outdir=tmp_path / "r")
    out = tmp_path / "r" / "quick"
    npz, _ = results.paths("toy", out)
    results.write_atomic(npz, results.npz_bytes({"x": np.zeros(9), "y": np.zeros(2)}))
    with pytest.raises(results.ResultError, match="does not match its sidecar"):
        results.load("toy", out)
    arrays, meta = _run(cfg, outdir=tmp_path / "r")
    assert len(mod.calls) == 2 and not meta.get("skipped") and arrays["x"].size == 4


def test_sidecar_listing_other_arrays_is_refused(tmp_path):
    meta = results.save("r", {"a": np.ones(2)}, {"k": 1}, tmp_path)
    js = results.paths("r", tmp_path)[1]
    js.write_text(json.dumps({**meta, "arrays": ["a", "b"]}))
    with pytest.raises(results.ResultError, match="arrays"):
        results.load("r", tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "garbage_json", "delete_npz"])
def test_damaged_result_is_one_line_in_figures_and_recomputed_by_the_sim(toy_sim, tmp_path, damage):
    mod, write = toy_sim
    cfg = write()
    _run(cfg, outdir=tmp_path / "r")
    npz, js = results.paths("toy", tmp_path / "r" / "quick")
    if damage == "truncate":
        npz.write_bytes(npz.read_bytes()[:50])
    elif damage == "garbage_json":
        js.write_text("{not json")
    else:
        npz.unlink()
    r = subprocess.run([sys.executable, "-m", "figures", "toy", "--results", str(tmp_path / "r"),
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and line.startswith("error: ") and "toy." in line
    arrays, meta = _run(cfg, outdir=tmp_path / "r")
    assert len(mod.calls) == 2 and not meta.get("skipped")
    results.load("toy", tmp_path / "r" / "quick")  # intact again


def test_save_holds_the_result_lock(tmp_path):
    held = results.lock("r", tmp_path)
    held.acquire()
    done = threading.Event()
    t = threading.Thread(target=lambda: (results.save("r", {"a": np.ones(2)}, {}, tmp_path), done.set()))
    t.start()
    time.sleep(0.5)
    assert not done.is_set()            # waiting for the lock, nothing written
    assert not results.paths("r", tmp_path)[0].exists()
    held.release()
    t.join(10)
    assert done.is_set() and results.load("r", tmp_path)[0]["a"].tolist() == [1.0, 1.0]


def test_resume_pieces_are_keyed_by_the_full_hash_and_force_discards_them(toy_sim, tmp_path, monkeypatch):
    mod, write = toy_sim
    cfg = write()
    out = tmp_path / "r" / "quick"
    stale = results.Parts("toy", "a" * 128, out)     # an interrupted run of other code, same 16-char prefix
    stale.get("a", lambda: {"x": np.full(4, 99.0)})
    full = "a" * 16 + "b" * 112
    assert results.Parts("toy", full, out).dir.name == f"toy-{full}"
    monkeypatch.setattr(results, "code_hash", lambda files: "a" * 64)  # this run's hash: "a"*16 prefix too
    arrays, _ = _run(cfg, outdir=tmp_path / "r")
    assert arrays["x"].tolist() == [0.0, 1.0, 2.0, 3.0]      # the stale piece was not reused
    assert not list((out / ".parts").glob("toy-*"))            # pieces go once the result is saved
    # An interrupted run leaves a piece of this very run; --force must not reuse it.
    cfg_hash = cli.load_config(cfg, "quick")[0].hash()
    results.Parts("toy", cfg_hash + "a" * 64, out).get("a", lambda: {"x": np.full(4, 7.0)})
    arrays, meta = _run(cfg, outdir=tmp_path / "r", force=True)
    assert arrays["x"].tolist() == [0.0, 1.0, 2.0, 3.0] and meta["resumed_parts"] == []
    # Without --force an interrupted run's pieces are resumed.
    results.Parts("toy", cfg_hash + "a" * 64, out).get("a", lambda: {"x": np.full(4, 7.0)})
    (out / "toy.json").unlink()
    arrays, meta = _run(cfg, outdir=tmp_path / "r")
    assert arrays["x"].tolist() == [7.0] * 4 and meta["resumed_parts"] == ["a"]


def test_processes_resume_only_what_every_process_sees(tmp_path):
    """Under jax.distributed a piece seen by process 0 but not by another must be recomputed by all."""
    p = results.Parts("x", "h" * 64, tmp_path)
    p.get("one", lambda: {"v": np.arange(3)})
    calls = []
    disagree = results.Parts("x", "h" * 64, tmp_path, agree=lambda seen: False)
    out = disagree.get("one", lambda: calls.append(1) or {"v": np.arange(3) + 10})
    assert calls == [1] and out["v"].tolist() == [10, 11, 12] and disagree.resumed == []
    assert cli.agree_all(True) is True and cli.agree_all(False) is False


def test_leftover_tmp_file_from_a_killed_write_does_not_break_a_later_run(toy_sim, tmp_path, monkeypatch):
    mod, write = toy_sim
    cfg = write()
    monkeypatch.setattr(results, "code_hash", lambda files: "c" * 64)
    cfg_hash = cli.load_config(cfg, "quick")[0].hash()
    d = tmp_path / "r" / "quick" / ".parts" / f"toy-{cfg_hash}{'c' * 64}"
    d.mkdir(parents=True)
    (d / ".a.npz.x1y2.tmp").write_bytes(b"half a piece")   # SIGKILL during write_atomic
    (d / "b.npz").write_bytes(b"PK\x03\x04 truncated")     # a damaged piece is recomputed, not trusted
    arrays, meta = _run(cfg, outdir=tmp_path / "r")
    assert arrays["y"].tolist() == [4.0, 1.0] and not d.exists()


def test_unwritable_results_folder_is_refused_before_computing(toy_sim, tmp_path):
    mod, write = toy_sim
    cfg = write()
    blocker = tmp_path / "file"
    blocker.write_text("a file where the results folder should be")
    with pytest.raises(results.ResultError, match="cannot write results"):
        _run(cfg, outdir=blocker)
    assert mod.calls == []


def test_unwritable_results_folder_is_one_line_exit_2_from_the_cli(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = subprocess.run([sys.executable, "-m", "sims.seesaw", "--config", "paper_configs/seesaw_large_batch.yaml",
                        "--out", str(blocker)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "cannot write results" in r.stderr


def test_non_finite_values_are_counted_in_the_sidecar_not_hidden(toy_sim, tmp_path):
    _, write = toy_sim
    arrays, meta = _run(write(poison=True), outdir=tmp_path / "r")
    assert meta["non_finite"] == {"x": 1}
    text = results.paths("toy", tmp_path / "r" / "quick")[1].read_text()
    assert "NaN" not in text and json.loads(text)["non_finite"] == {"x": 1}


def test_json_writer_never_emits_nan():
    blob = results.dumps({"a": float("nan"), "b": [float("inf"), np.float64(-np.inf)], "c": np.arange(2)})
    assert json.loads(blob) == {"a": "nan", "b": ["inf", "-inf"], "c": [0, 1]}
    assert b"NaN" not in blob and b"Infinity" not in blob


def test_code_hash_covers_sim_theory_and_runtime_not_claims():
    files = {p.relative_to(REPO).as_posix() for p in cli.code_files("seesaw")}
    # every file of the sim package, the shared modules it imports that compute, the theory it uses
    assert {f"sims/seesaw/{m}.py" for m in ("__init__", "lm", "recursion", "schedules")} <= files
    assert {"sims/runtime.py", "sims/data.py", "sims/models.py", "theory/numerics.py", "theory/seesaw.py"} <= files
    # not the bookkeeping (command line, configs, results files), the claims or the figures
    assert not any(f.startswith(("claims/", "figures/")) or f in ("sims/cli.py", "sims/config.py", "sims/results.py")
                   for f in files)
    assert "sims/models.py" not in {p.relative_to(REPO).as_posix() for p in cli.code_files("relu_dag")}
    # Theory modules the sim imports count too, transitively (lif_snn's theory imports theory.boolean).
    assert "theory/boolean.py" in {p.relative_to(REPO).as_posix() for p in cli.code_files("lif_snn")}


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_atomic_write_refuses_to_replace_links_devices_and_folders(tmp_path, kind):
    """The rename of an atomic write would replace a link or a device node (``/dev/stdout``) with a file."""
    target, path = tmp_path / "target", tmp_path / "report.json"
    target.write_text("keep")
    if kind == "symlink":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(results.ResultError, match="not a regular file"):
        results.write_atomic(path, b"{}")
    assert target.read_text() == "keep" and (path.is_symlink() or not path.is_file())
    r = run_main("claims", "verify", "--claim", "seesaw.paper_step_counts", "--json", str(path))
    assert r.returncode == 2 and "not a regular file" in r.stderr and "Traceback" not in r.stderr


def test_code_hash_covers_every_file_of_a_sim_package(tmp_path, monkeypatch):
    (tmp_path / "sims" / "pkg").mkdir(parents=True)
    (tmp_path / "theory").mkdir()
    for f in ("runtime.py", "data.py"):
        (tmp_path / "sims" / f).write_text("")
    (tmp_path / "theory" / "numerics.py").write_text("")
    (tmp_path / "theory" / "helper.py").write_text("")
    (tmp_path / "sims" / "pkg" / "__init__.py").write_text("from sims.pkg.train import run\n")
    (tmp_path / "sims" / "pkg" / "train.py").write_text("from theory import helper\n")
    monkeypatch.setattr(cli, "REPO", tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in cli.code_files("pkg")}
    assert {"sims/pkg/__init__.py", "sims/pkg/train.py", "theory/helper.py"} <= names
    assert "theory/other.py" not in names
    # An edit in the same process is seen (the parsed imports are cached by the file's bytes, not its path).
    (tmp_path / "theory" / "other.py").write_text("")
    (tmp_path / "sims" / "pkg" / "train.py").write_text("from theory import helper, other\n")
    names = {p.relative_to(tmp_path).as_posix() for p in cli.code_files("pkg")}
    assert {"theory/helper.py", "theory/other.py"} <= names


@pytest.mark.parametrize("argv, says", [
    (["figures", "../../../elsewhere/x"], "a figure name is a config's stem"),
    (["figures", "seesaw_lm/../../x"], "a figure name is a config's stem"),
    (["figures", "seesaw_lm", "--out", ""], "--out needs a folder path"),
    (["figures", "seesaw_lm", "--results", " "], "--results needs a folder path"),
    (["claims", "verify", "--claim", "seesaw.paper_step_counts", "--json", ""], "--json needs a file path"),
    (["claims", "verify", "--claim", "seesaw.paper_step_counts", "--markdown", ""], "--markdown needs a file"),
])
def test_paths_outside_or_empty_are_one_line_refusals(argv, says, tmp_path, monkeypatch):
    """A figure name with a path in it never reads or writes outside results/ and figures/out/; an empty
    path is refused, not silently ignored or resolved to the current folder. The entry point's ``main`` runs
    in this process, from another folder (its interpreter start-up is tested in test_entry_points.py)."""
    monkeypatch.chdir(tmp_path)
    r = run_main(*argv)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr[-500:]
    assert list(tmp_path.iterdir()) == []  # nothing written where it was run


def test_results_parts_resume_and_atomic_write(tmp_path):
    calls = []
    parts = results.Parts("x", "h" * 64, tmp_path)
    a = parts.get("one", lambda: calls.append(1) or {"v": np.arange(3)})
    again = results.Parts("x", "h" * 64, tmp_path).get("one", lambda: calls.append(2) or {"v": np.zeros(3)})
    np.testing.assert_array_equal(a["v"], again["v"])
    assert calls == [1]
    results.save("r", {"a": np.ones(2)}, {"k": 1}, tmp_path)
    assert not list(tmp_path.glob(".*.tmp"))
    arrays, meta = results.load("r", tmp_path)
    assert meta["k"] == 1 and arrays["a"].tolist() == [1.0, 1.0]
