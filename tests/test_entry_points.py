"""The one error boundary of each entry point (issue 24): Ctrl-C is one line saying what was kept, exit status
130, and a rerun resumes; a folder that cannot be written (read-only, full disk) is one line naming the path
and the system's reason, exit status 2; the ledger reads the repository's results from any working folder."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import figures.__main__ as figures_main
from claims import __main__ as claims_main
from claims import ledger
from figures import build
from sims import __main__ as sims_main
from sims import cli, results

REPO = results.REPO
WORKER = Path(__file__).resolve().parent / "_interrupt_worker.py"
ROOT = os.geteuid() == 0  # chmod does not stop root from writing


def _wait_for(path_glob: Path, proc: subprocess.Popen, limit_s: float = 120.0) -> Path:
    """The first file matching ``path_glob`` once it exists (polled; fails if ``proc`` ends first)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = sorted(path_glob.parent.parent.glob(f"{path_glob.parent.name}/{path_glob.name}"))
        if found:
            return found[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no {path_glob} within {limit_s} s")


# Restores SIGINT's default disposition, then replaces itself with ``python ARGS`` (exec keeps SIG_DFL).
_DEFAULT_SIGINT_SHIM = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def _interrupt_after(cmd: list[str], piece: Path, env: dict) -> subprocess.CompletedProcess:
    """Start ``cmd``, send SIGINT (Ctrl-C) once the resumable piece ``piece`` (a glob) is stored, and wait.
    ``cmd`` (a Python command line) starts as a terminal would start it, with SIGINT's default disposition:
    a pytest-xdist worker ignores SIGINT, a child inherits that, and Python then installs no
    KeyboardInterrupt handler (as under ``nohup``). A shim resets it and execs ``cmd``."""
    assert cmd[0] == sys.executable, cmd
    shim = [sys.executable, "-c", _DEFAULT_SIGINT_SHIM, *cmd[1:]]
    proc = subprocess.Popen(shim, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    _wait_for(piece, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_ctrl_c_mid_run_is_one_line_exit_130_and_the_rerun_resumes(tmp_path):
    """A simulation interrupted after its first piece: one line naming the kept piece, exit 130, no
    traceback; the same command then resumes from that piece and saves the result an uninterrupted run saves."""
    cfg = tmp_path / "toy_wait.yaml"
    cfg.write_text("sim: toy_wait\nexperiment: wait\nseed: 0\nquick:\n  n: 5\npaper:\n  n: 5\n")
    cmd = [sys.executable, str(WORKER), "--config", str(cfg), "--out", str(tmp_path / "r")]
    env = {**os.environ, "PBE_PROGRESS": "0"}
    r = _interrupt_after(cmd, tmp_path / "r" / "quick" / ".parts" / "toy_wait-*" / "a.npz",
                         {**env, "PBE_TEST_BLOCK": "1"})
    assert r.returncode == 130 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("interrupted (Ctrl-C): kept 1 finished piece in ")
    assert f"{tmp_path / 'r' / 'quick'}/.parts/" in r.stderr and "resumes" in r.stderr
    assert not results.paths("toy_wait", tmp_path / "r" / "quick")[0].exists()  # no result from half a run
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    arrays, meta = results.load("toy_wait", tmp_path / "r" / "quick")
    assert meta["resumed_parts"] == ["a"]
    np.testing.assert_array_equal(arrays["x"], np.arange(5.0))
    np.testing.assert_array_equal(arrays["y"], np.arange(5.0) ** 2)


@pytest.mark.slow
def test_ctrl_c_in_a_real_simulation_resumes_to_the_uninterrupted_result(tmp_path):
    """The same on social_choice's lcpo (host-side LPs, two pieces): interrupted after the first family's
    piece, the rerun reuses it and saves arrays equal to those of a run never interrupted."""
    text = (cli.CONFIGS / "social_choice_lcpo.yaml").read_text()
    assert "  n_draws: 150\n" in text
    cfg = tmp_path / "lcpo_small.yaml"
    cfg.write_text(text.replace("  n_draws: 150\n", "  n_draws: 12\n"))
    cmd = [sys.executable, "-m", "sims.social_choice", "--config", str(cfg)]
    env = {**os.environ, "PBE_PROGRESS": "0"}
    r = _interrupt_after([*cmd, "--out", str(tmp_path / "r")],
                         tmp_path / "r" / "quick" / ".parts" / "lcpo_small-*" / "lcpo_generic.npz", env)
    assert r.returncode == 130 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert "kept 1 finished piece" in r.stderr
    for out in ("r", "fresh"):
        done = subprocess.run([*cmd, "--out", str(tmp_path / out)], capture_output=True, text=True, cwd=REPO,
                              env=env, timeout=300)
        assert done.returncode == 0, done.stderr
    resumed, meta = results.load("lcpo_small", tmp_path / "r" / "quick")
    fresh, fresh_meta = results.load("lcpo_small", tmp_path / "fresh" / "quick")
    assert meta["resumed_parts"] == ["lcpo_generic"] and fresh_meta["resumed_parts"] == []
    assert sorted(resumed) == sorted(fresh)
    for k in fresh:
        np.testing.assert_array_equal(resumed[k], fresh[k])


def _raise_interrupt(*_, **__):
    raise KeyboardInterrupt


GE = "social_choice_ge_instance"


@pytest.mark.parametrize("entry", ["sims.<paper>", "sims", "figures", "figures.build", "claims", "benchmarks"])
def test_every_entry_point_turns_ctrl_c_into_one_line_and_exit_130(entry, tmp_path, monkeypatch, capsys):
    """Ctrl-C arriving in the long part of each command (its run function raising KeyboardInterrupt): one
    line on stderr saying what was kept, exit status 130, no traceback."""
    if entry == "sims.<paper>":
        monkeypatch.setattr(cli, "run_config", _raise_interrupt)
        rc = cli.main("sims.social_choice", ["--config", str(cli.CONFIGS / f"{GE}.yaml"), "--out", str(tmp_path)])
    elif entry == "sims":
        monkeypatch.setattr(cli, "run_config", _raise_interrupt)
        rc = sims_main.main([GE, "--out", str(tmp_path)])
    elif entry == "figures":
        monkeypatch.setattr(figures_main, "render", _raise_interrupt)
        rc = figures_main.main(["mine", "--results", str(tmp_path), "--out", str(tmp_path / "o")])
    elif entry == "figures.build":
        monkeypatch.setattr(build, "build", _raise_interrupt)
        rc = build.main(["social_choice", "--results", str(tmp_path), "--out", str(tmp_path / "o")])
    elif entry == "claims":
        monkeypatch.setattr(ledger, "run", _raise_interrupt)
        rc = claims_main.main(["verify", "--claim", "seesaw.paper_step_counts"])
    else:
        monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))  # the import below sets it if unset
        from benchmarks import __main__ as bench_main

        monkeypatch.setattr(bench_main, "figure_times", _raise_interrupt)
        rc = bench_main.main(["--figures-only"])
    err = capsys.readouterr().err
    assert rc == 130 and err.count("\n") == 1 and err.startswith("interrupted (Ctrl-C): "), err
    if entry.startswith("sims"):
        assert f"nothing finished was kept in {tmp_path / 'quick'}/" in err and "starts again" in err


def test_kept_for_rerun_counts_saved_results_and_finished_pieces(tmp_path):
    results.save("f1", {"a": np.ones(2)}, {}, tmp_path)
    results.Parts("f2", "h" * 64, tmp_path).get("p", lambda: {"a": np.ones(2)})
    results.Parts("f2", "g" * 64, tmp_path).get("q", lambda: {"a": np.ones(2)})
    results.Parts("f2_other", "h" * 64, tmp_path).get("p", lambda: {"a": np.ones(2)})  # another figure's
    said = cli.kept_for_rerun(["f1", "f2"], tmp_path)
    assert said == (f"kept 1 saved result in {tmp_path}/ and 2 finished pieces in {tmp_path}/.parts/; "
                    "rerunning the same command resumes from them")


def _read_only(folder: Path, monkeypatch, why: int = errno.EROFS) -> None:
    """Make ``folder`` unwritable: chmod 0o500, or (as root, whom chmod does not stop) every new file in it
    refused with ``why``."""
    folder.mkdir(parents=True, exist_ok=True)
    if not ROOT:
        folder.chmod(0o500)
        return
    real = results.tempfile.mkstemp

    def refuse(*a, dir=None, **kw):
        if dir is not None and Path(dir).resolve().is_relative_to(folder.resolve()):
            raise OSError(why, os.strerror(why))
        return real(*a, dir=dir, **kw)

    monkeypatch.setattr(results.tempfile, "mkstemp", refuse)


def _full_disk(monkeypatch) -> None:
    """Every file written through :func:`sims.results.write_atomic` fails as on a full disk (ENOSPC)."""
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results.os, "fsync", full)


def _one_line(capsys, *says) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert all(s in err for s in says), err
    return err


def _own_result(folder: Path) -> None:
    """A user's own seesaw large-batch result (no paper config: rendered as it is)."""
    results.save("mine", {"batch_sizes": np.array([4, 16]), "noise_vars": np.array([1.0]),
                          "cosine": np.ones((1, 2)), "seesaw": np.ones((1, 2)) * 1.1,
                          "fixed_lr": np.ones((1, 2)) * 2, "b_noise": np.full((1, 2), 8.0)},
                 {"sim": "seesaw", "experiment": "large_batch", "scale": "quick", "git_commit": "x",
                  "device_count": 1, "config": {"total_samples": 10}}, folder / "quick")


@pytest.mark.parametrize("trouble", ["read-only", "full disk"])
def test_figures_out_that_cannot_be_written_is_one_line_exit_2(trouble, tmp_path, monkeypatch, capsys):
    _own_result(tmp_path / "r")
    out = tmp_path / "o"
    if trouble == "read-only":
        _read_only(out, monkeypatch)
    else:
        _full_disk(monkeypatch)
    rc = figures_main.main(["mine", "--results", str(tmp_path / "r"), "--out", str(out)])
    reason = os.strerror(errno.ENOSPC) if trouble == "full disk" else ("Read-only" if ROOT else "Permission denied")
    err = _one_line(capsys, str(out / "quick"), reason)
    assert rc == 2 and "recompute" not in err  # the folder is the trouble, not the result
    assert [p for p in out.rglob("*") if p.is_file()] == []  # no figure, no temporary file


@pytest.mark.parametrize("trouble", ["read-only", "full disk"])
def test_a_results_folder_that_cannot_be_written_is_one_line_exit_2(trouble, toy_sim, tmp_path, monkeypatch,
                                                                    capsys):
    mod, write = toy_sim
    cfg = write()
    out = tmp_path / "r"
    if trouble == "read-only":
        _read_only(out / "quick", monkeypatch)
    else:
        _full_disk(monkeypatch)
    rc = cli.main("sims.toy", ["--config", str(cfg), "--out", str(out)])
    _one_line(capsys, str(out / "quick"), os.strerror(errno.ENOSPC) if trouble == "full disk" else "")
    assert rc == 2 and not results.paths("toy", out / "quick")[0].exists()
    assert not list((out / "quick").rglob("*.tmp"))
    assert (mod.calls == []) == (trouble == "read-only")  # checked before computing; a full disk mid-run


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_a_report_on_a_full_disk_is_one_line_exit_2(flag, tmp_path, monkeypatch, capsys):
    _full_disk(monkeypatch)
    report = tmp_path / "report"
    rc = claims_main.main(["verify", "--claim", "seesaw.paper_step_counts", flag, str(report)])
    _one_line(capsys, str(report), os.strerror(errno.ENOSPC))
    assert rc == 2 and list(tmp_path.iterdir()) == []


def test_a_report_in_a_read_only_folder_is_refused_before_any_claim_runs(tmp_path, monkeypatch, capsys):
    _read_only(tmp_path / "ro", monkeypatch, errno.EACCES)
    monkeypatch.setattr(ledger, "run", lambda *a, **k: pytest.fail("a claim ran"))
    rc = claims_main.main(["verify", "--claim", "seesaw.paper_step_counts", "--json", str(tmp_path / "ro" / "c.json")])
    _one_line(capsys, str(tmp_path / "ro"), "cannot write the report there")
    assert rc == 2


def test_the_ledger_reads_and_computes_in_the_repositorys_results_from_any_folder(toy_sim, tmp_path, monkeypatch):
    """``claims verify`` run from another folder uses the repository's ``results/`` (:data:`ledger.RESULTS`),
    never a ``results/`` of the working folder."""
    assert ledger.RESULTS == REPO / "results"
    mod, write = toy_sim
    cfg = write("toy_fig", n=3)
    monkeypatch.setattr(cli, "CONFIGS", cfg.parent)
    monkeypatch.setattr(ledger, "RESULTS", tmp_path / "repo_results")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    arrays, _ = ledger.figure_result("toy_fig", "quick")
    assert (tmp_path / "repo_results" / "quick" / "toy_fig.npz").is_file() and list(elsewhere.iterdir()) == []
    again, meta = ledger.figure_result("toy_fig", "quick")
    assert len(mod.calls) == 1 and meta["config"]["n"] == 3  # loaded from there, not recomputed
    np.testing.assert_array_equal(again["x"], arrays["x"])


@pytest.mark.parametrize("entry, argv, says", [
    ("sims.<paper>", ["--config", "", "--out", "r"], "--config needs a file path"),
    ("sims.<paper>", ["--config", str(cli.CONFIGS / f"{GE}.yaml"), "--out", " "], "--out needs a folder path"),
    ("sims", ["../x"], "'../x' is neither a paper nor a figure"),
    ("sims", [f"{GE}/../x"], f"is neither a paper nor a figure (did you mean '{GE}'?"),
    ("figures.build", ["../social_choice"], "no paper '../social_choice'"),
    ("claims", ["verify", "--claim", "../seesaw.paper_step_counts"], "unknown claim"),
    ("claims", ["verify", "--paper", "../seesaw"], "unknown paper '../seesaw'"),
])
def test_names_with_paths_and_empty_paths_are_one_line_refusals(entry, argv, says, tmp_path, monkeypatch, capsys):
    """Names holding ``/`` or ``..`` name nothing (figures, configs, papers, claims), and an empty output or
    config path is refused rather than resolved to the working folder; nothing is written there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "run_config", lambda *a, **k: pytest.fail("a simulation ran"))
    main = {"sims.<paper>": lambda a: cli.main("sims.social_choice", a), "sims": sims_main.main,
            "figures.build": build.main, "claims": claims_main.main}[entry]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err, err
    assert list(tmp_path.iterdir()) == []
