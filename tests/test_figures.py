"""``python -m figures`` and ``python -m figures.build`` (what ``make figures`` runs, one process per paper),
on the cheapest paper config (social_choice_ge_instance, under a second) copied to a temporary folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import yaml

from conftest import run_main
from figures import build
from sims import cli, results

REPO = results.REPO
NAME = "social_choice_ge_instance"


@pytest.fixture
def configs(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    shutil.copy(cli.CONFIGS / f"{NAME}.yaml", folder / f"{NAME}.yaml")
    return folder


def test_build_computes_then_skips_then_recomputes_a_damaged_result(tmp_path, configs):
    kw = dict(results_dir=tmp_path / "r", out_dir=tmp_path / "o", configs=configs)
    first = build.build(["social_choice"], "quick", **kw)
    assert len(first) == 1 and first[0].startswith(f"[1/1] {NAME}: computed in ") and first[0].endswith("; rendered")
    comp = results.load(NAME, tmp_path / "r" / "quick")[1]["compile"]  # measured compilations of the run
    assert set(comp) == {"compile_s", "compilations", "cache_hits", "cache_misses"} and comp["compile_s"] >= 0
    assert all(isinstance(comp[k], int) and comp[k] >= 0 for k in ("compilations", "cache_hits", "cache_misses"))
    png = tmp_path / "o" / "quick" / f"{NAME}.png"
    assert png.stat().st_size > 1000 and (tmp_path / "o" / "quick" / f"{NAME}.pdf").stat().st_size > 1000
    assert build.build(["social_choice"], "quick", **kw) == [f"[1/1] {NAME}: current; figure current"]
    npz, _ = results.paths(NAME, tmp_path / "r" / "quick")
    npz.write_bytes(npz.read_bytes()[:40])  # truncated: not current, recomputed and rendered again
    again = build.build(["social_choice"], "quick", **kw)
    assert again[0].startswith(f"[1/1] {NAME}: computed in ") and again[0].endswith("; rendered")
    results.load(NAME, tmp_path / "r" / "quick")


def test_figures_by_paper_reads_the_sim_key_not_the_file_name(configs):
    (configs / "odd_name.yaml").write_text((configs / f"{NAME}.yaml").read_text())
    by = cli.figures_by_paper(configs)
    assert by["social_choice"] == ["odd_name", NAME] and by["seesaw"] == []
    (configs / "x.yaml").write_text("seed: 0\n")
    with pytest.raises(cli.ConfigError, match="x.yaml"):
        cli.figures_by_paper(configs)


def test_every_paper_has_figures_and_every_config_belongs_to_a_paper():
    papers = cli.simulation_modules()
    assert "runtime" not in papers and "cli" not in papers and len(papers) == len(set(papers)) >= 7
    by = cli.figures_by_paper()
    assert sorted(by) == papers and all(by[p] for p in papers)
    assert sorted(n for names in by.values() for n in names) == sorted(p.stem for p in cli.CONFIGS.glob("*.yaml"))


def test_python_m_sims_lists_and_refuses_in_one_line():
    r = _run("-m", "sims")
    assert r.returncode == 0 and "social_choice: " in r.stdout and NAME in r.stdout
    r = _run("-m", "sims", "social_choice_ge_instanc")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and f"did you mean '{NAME}'" in r.stderr


def _run(*args):
    """``python -m MODULE ARGV`` for ``args = ("-m", MODULE, *ARGV)``, in this process (conftest.run_main)."""
    assert args[0] == "-m", args
    return run_main(*args[1:])


def test_build_refuses_an_unknown_paper_in_one_line():
    r = _run("-m", "figures.build", "social_choise")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "did you mean 'social_choice'" in r.stderr


def test_a_paper_figure_is_not_rendered_from_another_configs_result(tmp_path):
    """A config outside paper_configs/ with a paper figure's file name (another seed) writes a result of that
    name; `python -m figures` refuses to render it as the paper's figure (one line, exit 2)."""
    cfg = yaml.safe_load((cli.CONFIGS / f"{NAME}.yaml").read_text())
    cfg["seed"] = int(cfg.get("seed", 0)) + 1
    own = tmp_path / f"{NAME}.yaml"
    own.write_text(yaml.safe_dump(cfg))
    cli.run_config(own, "quick", outdir=tmp_path / "r", quiet=True)
    r = _run("-m", "figures", NAME, "--results", str(tmp_path / "r"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert f"is not the result of paper_configs/{NAME}.yaml" in r.stderr and str(own) in r.stderr
    assert not (tmp_path / "o").exists()
    cli.run_config(cli.CONFIGS / f"{NAME}.yaml", "quick", outdir=tmp_path / "r", quiet=True)
    r = _run("-m", "figures", NAME, "--results", str(tmp_path / "r"), "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr


def test_a_config_from_outside_paper_configs_never_writes_over_the_repositorys_result(tmp_path):
    """Into the repository's results/, a config from elsewhere with a paper figure's name goes to
    results/<scale>/custom/<name>-<its config hash>/; the repository's config, or another --out, as asked."""
    cfg = yaml.safe_load((cli.CONFIGS / f"{NAME}.yaml").read_text())
    cfg["seed"] = int(cfg.get("seed", 0)) + 1
    own = tmp_path / f"{NAME}.yaml"
    own.write_text(yaml.safe_dump(cfg))
    repo_results = cli.REPO / "results"
    custom, _ = cli.load_config(own, "quick")
    ours, _ = cli.load_config(cli.CONFIGS / f"{NAME}.yaml", "quick")
    assert custom.hash() != ours.hash()
    assert cli.output_dir(custom, repo_results) == repo_results / "quick" / "custom" / f"{NAME}-{custom.hash()[:12]}"
    assert cli.output_dir(custom, repo_results, 2) == (repo_results / "quick" / "seed-offset-2" / "custom"
                                                       / f"{NAME}-{custom.hash()[:12]}")
    assert cli.output_dir(ours, repo_results) == repo_results / "quick"
    assert cli.output_dir(custom, tmp_path / "r") == tmp_path / "r" / "quick"


def test_figures_cli_names_an_unknown_figure(tmp_path):
    r = _run("-m", "figures", "nc_forgetting_ldaa", "--results", str(tmp_path))
    line = r.stderr.strip()
    assert r.returncode == 2 and len(line.splitlines()) == 1
    assert "no figure 'nc_forgetting_ldaa'" in line and "did you mean 'nc_forgetting_lda'?" in line
    assert "python -m figures` lists" in line and len(line) <= 400
    assert "did you mean 'nc_forgetting_lda'?" in line
    # a known figure without its result names the simulation that makes it (no placeholder left)
    r = _run("-m", "figures", "nc_forgetting_lda", "--results", str(tmp_path))
    assert r.returncode == 2 and "python -m sims.nc_forgetting --config paper_configs/nc_forgetting_lda.yaml" \
        in r.stderr and "<paper>" not in r.stderr


def test_figures_render_headless_even_if_an_interactive_backend_is_asked_for(tmp_path):
    """No display, MPLBACKEND pointing at a GUI backend: `python -m figures` still writes PNG and PDF (a
    user's own result, not a paper figure's: those must be current for their config to be rendered)."""
    results.save("my_large_batch", {"batch_sizes": np.array([4, 16]), "noise_vars": np.array([1.0]),
                                        "cosine": np.ones((1, 2)), "seesaw": np.ones((1, 2)) * 1.1,
                                        "fixed_lr": np.ones((1, 2)) * 2, "b_noise": np.full((1, 2), 8.0)},
                 {"sim": "seesaw", "experiment": "large_batch", "scale": "quick", "git_commit": "x",
                  "device_count": 1, "config": {"total_samples": 10}}, tmp_path / "quick")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["MPLBACKEND"] = "TkAgg"
    r = subprocess.run([sys.executable, "-m", "figures", "my_large_batch", "--results", str(tmp_path),
                        "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True,
                       cwd=results.REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "quick" / "my_large_batch.png").stat().st_size > 1000
    assert (tmp_path / "out" / "quick" / "my_large_batch.pdf").stat().st_size > 1000


@pytest.mark.parametrize("meta", [{"experiment": "lm"}, {"sim": "seesaw", "experiment": "no_such_plot"},
                                  {"sim": "../x", "experiment": "lm"}, {"sim": "no_such_paper", "experiment": "lm"}])
def test_a_sidecar_that_names_no_plot_is_one_line(tmp_path, meta):
    """A result whose sidecar lacks `sim`, or names a paper or experiment nothing plots: one line, exit 2."""
    results.save("mine", {"a": np.ones(2)}, {"scale": "quick", **meta}, tmp_path / "quick")
    r = _run("-m", "figures", "mine", "--results", str(tmp_path), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "names no plot" in r.stderr and "<paper>" not in r.stderr and not (tmp_path / "o").exists()



def test_python_m_figures_without_a_name_lists_every_paper_figure_with_its_result_state(tmp_path):
    out = run_main("figures", "--results", str(tmp_path))
    names = sorted(c.stem for c in (results.REPO / "paper_configs").glob("*.yaml"))
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and [ln.split()[0] for ln in lines[:-1]] == names
    assert all("no result in" in ln for ln in lines[:-1]) and "python -m figures NAME" in lines[-1]


@pytest.mark.parametrize("platforms, scale, side_by_side", [
    ("cpu", "quick", True), ("cpu", "paper", False), ("cuda", "quick", False), ("cpu,cuda", "quick", False)])
def test_make_figures_runs_papers_side_by_side_only_on_a_cpu_at_quick_scale(monkeypatch, platforms, scale,
                                                                            side_by_side):
    """make figures' default job count (figures.build --default-jobs): the cores this process may use on a
    CPU-only machine at quick scale, else 1 (a JAX process takes most of an accelerator's memory)."""
    monkeypatch.setenv("JAX_PLATFORMS", platforms)
    assert build.default_jobs(scale) == (len(os.sched_getaffinity(0)) if side_by_side else 1)
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    r = run_main("figures.build", "--default-jobs", "--scale", scale)
    assert (r.returncode, r.stdout) == (0, f"{len(os.sched_getaffinity(0)) if scale == 'quick' else 1}\n")
