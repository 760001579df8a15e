"""Strict configs: YAML 1.2 floats, one-line errors naming file and key, exit status 2 from the CLI."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from sims import cli
from sims.config import ConfigError, load, param, read_yaml

REPO = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Toy:
    lr: float = param(1e-3, gt=0)
    steps: int = param(10, ge=1)
    sizes: tuple[int, ...] = param((1, 2), ge=1)
    flag: bool = False


def _write(tmp_path, text, name="toy.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("text, value", [("1e-3", 1e-3), ("5E-6", 5e-6), ("1.5e3", 1500.0), ("2", 2.0),
                                         ("-1e-2", None)])
def test_yaml_scientific_notation_loads_as_float(tmp_path, text, value):
    p = _write(tmp_path, f"sim: toy\nexperiment: e\nquick:\n  lr: {text}\n")
    if value is None:
        with pytest.raises(ConfigError, match="quick.lr"):
            load(p, "quick", {"e": Toy}, complete=False)
        return
    cfg = load(p, "quick", {"e": Toy}, complete=False)
    assert isinstance(cfg.params.lr, float) and cfg.params.lr == value


def test_string_in_float_field_is_refused(tmp_path):
    p = _write(tmp_path, "sim: toy\nexperiment: e\nquick:\n  lr: fast\n")
    with pytest.raises(ConfigError) as e:
        load(p, "quick", {"e": Toy}, complete=False)
    assert str(p) in str(e.value) and "quick.lr" in str(e.value) and "number" in str(e.value)


@pytest.mark.parametrize("body, key", [
    ("quick:\n  stepz: 3\n", "quick.stepz"),
    ("params:\n  stepz: 3\n", "params.stepz"),
    ("params:\n  lr: 0\n", "params.lr"),
    ("quick:\n  steps: 2.5\n", "quick.steps"),
    ("quick:\n  steps: 0\n", "quick.steps"),
    ("quick:\n  steps: true\n", "quick.steps"),
    ("quick:\n  sizes: [1, 0]\n", "quick.sizes[1]"),
    ("quick:\n  sizes: 3\n", "quick.sizes"),
    ("quick:\n  flag: 1\n", "quick.flag"),
    ("extra: 1\n", "extra"),
    ("seed: -1\n", "seed"),
    ("experiment: nope\n", "experiment"),
])
def test_bad_values_name_the_key(tmp_path, body, key):
    text = "sim: toy\n" + ("" if body.startswith("experiment") else "experiment: e\n") + body
    p = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load(p, "quick", {"e": Toy}, complete=False)
    assert f"'{key}'" in str(e.value) and "\n" not in str(e.value)


def test_duplicate_keys_and_broken_yaml_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="duplicate"):
        read_yaml(_write(tmp_path, "sim: a\nsim: b\n"))
    with pytest.raises(ConfigError, match="valid YAML"):
        read_yaml(_write(tmp_path, "sim: [a\n", "b.yaml"))


def test_scale_overrides_params_and_hash_depends_on_scale(tmp_path):
    p = _write(tmp_path, "sim: toy\nexperiment: e\nparams:\n  steps: 5\nquick:\n  lr: 0.1\npaper:\n  steps: 50\n")
    q, f = load(p, "quick", {"e": Toy}, complete=False), load(p, "paper", {"e": Toy}, complete=False)
    assert (q.params.steps, q.params.lr, f.params.steps, f.params.lr) == (5, 0.1, 50, 1e-3)
    assert q.hash() != f.hash() and q.hash() == load(p, "quick", {"e": Toy}, complete=False).hash()


@pytest.mark.parametrize("cfg", sorted((REPO / "paper_configs").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_paper_config_loads_at_both_scales(cfg):
    for scale in ("quick", "paper"):
        rc, mod = cli.load_config(cfg, scale)
        assert rc.name == cfg.stem and rc.experiment in mod.EXPERIMENTS
    lines = cfg.read_text().splitlines()
    header = lines[:next(i for i, ln in enumerate(lines) if not ln.startswith("#"))]
    assert any("python -m sims." in line for line in header), "header must give the command"
    assert any("Expected time" in line for line in header), "header must give the expected time"


def test_cli_bad_config_exits_2_with_one_line(tmp_path):
    bad = _write(tmp_path, (REPO / "paper_configs" / "seesaw_large_batch.yaml").read_text()
                 .replace("eta0: 5e-2", "eta0: fast"), "seesaw_bad.yaml")
    r = subprocess.run([sys.executable, "-m", "sims.seesaw", "--config", str(bad), "--out", str(tmp_path)],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and str(bad) in lines[0] and "eta0" in lines[0] and "Traceback" not in r.stderr


def test_cli_refuses_config_of_another_sim(tmp_path):
    p = _write(tmp_path, "sim: other\nexperiment: e\n")
    r = subprocess.run([sys.executable, "-m", "sims.seesaw", "--config", str(p)], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "'sim'" in r.stderr and "Traceback" not in r.stderr


def test_cli_refuses_another_papers_config_and_reports_skips(tmp_path):
    other = REPO / "paper_configs" / "relu_dag_conservation.yaml"
    r = subprocess.run([sys.executable, "-m", "sims.seesaw", "--config", str(other)], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "'sim'" in r.stderr and "sims.seesaw" in r.stderr
    cfg = tmp_path / "seesaw_large_batch.yaml"
    cfg.write_text((REPO / "paper_configs" / "seesaw_large_batch.yaml").read_text()
                   .replace("d: 64", "d: 4").replace("batch_sizes: [4, 16, 64, 256]", "batch_sizes: [4]")
                   .replace("total_samples: 2097152", "total_samples: 1024"))
    cmd = [sys.executable, "-m", "sims.seesaw", "--config", str(cfg), "--out", str(tmp_path / "r")]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    second = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert first.returncode == second.returncode == 0, first.stderr
    assert "wrote" in first.stderr and "up to date" in second.stderr and "wrote" not in second.stderr


def test_a_forgotten_parameter_is_an_error_not_a_default(tmp_path):
    full = "sim: toy\nexperiment: e\nparams:\n  lr: 0.1\n  steps: 3\n  sizes: [1]\nquick:\n  flag: true\n"
    assert load(_write(tmp_path, full), "quick", {"e": Toy}).params.flag is True
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, full.replace("  steps: 3\n", ""), "b.yaml"), "quick", {"e": Toy})
    assert "'quick.steps'" in str(e.value) and "nothing" in str(e.value)
