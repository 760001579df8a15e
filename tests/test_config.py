"""Strict configs: YAML 1.2 floats, one-line errors naming file and key, exit status 2 from the CLI."""

import dataclasses
import subprocess
import sys
import time
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
    refused = subprocess.Popen([sys.executable, "-m", "sims.seesaw", "--config", str(other)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=REPO)  # beside the first run below
    cfg = tmp_path / "seesaw_large_batch.yaml"
    cfg.write_text((REPO / "paper_configs" / "seesaw_large_batch.yaml").read_text()
                   .replace("d: 64", "d: 4").replace("batch_sizes: [4, 16, 64, 256]", "batch_sizes: [4]")
                   .replace("total_samples: 2097152", "total_samples: 1024"))
    cmd = [sys.executable, "-m", "sims.seesaw", "--config", str(cfg), "--out", str(tmp_path / "r")]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    _, err = refused.communicate(timeout=120)
    assert refused.returncode == 2 and "'sim'" in err and "sims.seesaw" in err
    second = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert first.returncode == second.returncode == 0, first.stderr
    assert "wrote" in first.stderr and "up to date" in second.stderr and "wrote" not in second.stderr


def test_a_forgotten_parameter_is_an_error_not_a_default(tmp_path):
    full = "sim: toy\nexperiment: e\nparams:\n  lr: 0.1\n  steps: 3\n  sizes: [1]\nquick:\n  flag: true\n"
    assert load(_write(tmp_path, full), "quick", {"e": Toy}).params.flag is True
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, full.replace("  steps: 3\n", ""), "b.yaml"), "quick", {"e": Toy})
    assert "'quick.steps'" in str(e.value) and "nothing" in str(e.value)


def _quick_configs() -> dict:
    """``(sim, experiment) -> {config file name: parameters at quick scale}`` of every paper config."""
    out: dict = {}
    for path in sorted((REPO / "paper_configs").glob("*.yaml")):
        cfg, _ = cli.load_config(path, "quick")
        out.setdefault((cfg.sim, cfg.experiment), {})[path.name] = cfg.params
    return out


def test_every_parameter_default_is_its_own_configs_quick_value():
    """Configs are the one source of every default: an experiment's parameter dataclass defaults to the
    quick-scale values of its own config, ``paper_configs/<sim>_<experiment>.yaml`` (the other configs of
    the experiment, e.g. nc_forgetting_ratio and _snr of buffer_sweep, state theirs; every config states
    every key), so that a default read in the code is the value that runs. Fields without a default are
    left out."""
    wrong = []
    for (sim, experiment), configs in _quick_configs().items():
        own = f"{sim}_{experiment}.yaml"
        assert own in configs, f"experiment {sim}.{experiment} has no config of its own ({own}): {sorted(configs)}"
        params = configs[own]
        for f in dataclasses.fields(params):
            if f.default is not dataclasses.MISSING and f.default != getattr(params, f.name):
                wrong.append(f"{type(params).__name__}.{f.name}: default {f.default!r}, {own} quick "
                             f"{getattr(params, f.name)!r}")
    assert not wrong, "\n".join(wrong)


def test_the_defaults_test_sees_a_default_that_differs(monkeypatch):
    """The check above on a planted difference: LMParams.lr defaulting to 3e-3 where seesaw_lm.yaml runs 1e-2
    (the case issue 19 named)."""
    from sims.seesaw import LMParams

    field = {f.name: f for f in dataclasses.fields(LMParams)}["lr"]
    monkeypatch.setattr(field, "default", 3e-3)
    with pytest.raises(AssertionError, match=r"LMParams.lr: default 0.003, seesaw_lm.yaml quick 0.01"):
        test_every_parameter_default_is_its_own_configs_quick_value()


@dataclasses.dataclass(frozen=True)
class Kinds:
    """One field of each kind, without bounds, for the YAML 1.2 scalar rules."""

    i: int = 0
    x: float = 0.0
    b: bool = False
    s: str = ""
    xs: tuple[float, ...] = (1.0,)
    seed_like: int = param(0, ge=0)


def _kinds(tmp_path, body, name="k.yaml"):
    return load(_write(tmp_path, "sim: toy\nexperiment: e\nquick:\n" + body, name), "quick", {"e": Kinds},
                complete=False).params


@pytest.mark.parametrize("text, value", [("012", 12), ("0o12", 10), ("0x1A", 26), ("-7", -7), ("+3", 3),
                                         ("0", 0), ("007", 7)])
def test_yaml12_integers(tmp_path, text, value):
    got = _kinds(tmp_path, f"  i: {text}\n").i
    assert type(got) is int and got == value


@pytest.mark.parametrize("text", ["1:04", "1_000", "0b101", "0o18", "0xG", "1e3", "12.0", "0O12", "0X1A"])
def test_yaml11_only_integers_are_refused(tmp_path, text):
    with pytest.raises(ConfigError, match="'quick.i'.*an integer"):
        _kinds(tmp_path, f"  i: {text}\n")


@pytest.mark.parametrize("text", ["1:04", "1_000", "0b101", "yes", "on", "1:30.5", "1_0.5"])
def test_yaml11_only_scalars_are_strings(tmp_path, text):
    assert _kinds(tmp_path, f"  s: {text}\n").s == text


@pytest.mark.parametrize("text, value", [("true", True), ("True", True), ("TRUE", True), ("false", False),
                                         ("False", False), ("FALSE", False)])
def test_yaml12_booleans(tmp_path, text, value):
    assert _kinds(tmp_path, f"  b: {text}\n").b is value


@pytest.mark.parametrize("text", ["yes", "no", "on", "off", "Yes", "OFF", "y", "n", "tRUE", "1"])
def test_yaml11_only_booleans_are_refused(tmp_path, text):
    with pytest.raises(ConfigError, match="'quick.b'.*true or false"):
        _kinds(tmp_path, f"  b: {text}\n")


@pytest.mark.parametrize("text, value", [("1e-3", 1e-3), (".5", 0.5), ("1.", 1.0), ("-2.5E+2", -250.0),
                                         ("+1.5e3", 1500.0), ("3", 3.0), ("0x10", 16.0)])
def test_yaml12_floats(tmp_path, text, value):
    got = _kinds(tmp_path, f"  x: {text}\n").x
    assert type(got) is float and got == value


@pytest.mark.parametrize("text", ["1:30.5", "1_0.5", "1e", "e3", "1.5.2"])
def test_yaml11_only_floats_are_refused(tmp_path, text):
    with pytest.raises(ConfigError, match="'quick.x'.*a finite number"):
        _kinds(tmp_path, f"  x: {text}\n")


@pytest.mark.parametrize("body, key", [
    ("  x: .inf\n", "quick.x"), ("  x: -.inf\n", "quick.x"), ("  x: .Inf\n", "quick.x"),
    ("  x: .nan\n", "quick.x"), ("  x: .NaN\n", "quick.x"), ("  x: 1e400\n", "quick.x"),
    ("  x: -1e400\n", "quick.x"), ("  xs: [1.0, .inf]\n", "quick.xs[1]"), ("  xs: [1e400]\n", "quick.xs[0]"),
])
def test_non_finite_floats_are_refused(tmp_path, body, key):
    with pytest.raises(ConfigError) as e:
        _kinds(tmp_path, body)
    assert f"'{key}'" in str(e.value) and "a finite number" in str(e.value)


def test_non_finite_float_is_refused_even_within_bounds(tmp_path):
    """``lr`` only needs ``> 0``: ``.inf`` satisfies that and used to run, writing all-NaN arrays."""
    for i, text in enumerate((".inf", "1e400")):
        with pytest.raises(ConfigError, match="'quick.lr'.*a finite number > 0"):
            load(_write(tmp_path, f"sim: toy\nexperiment: e\nquick:\n  lr: {text}\n", f"{i}.yaml"), "quick",
                 {"e": Toy}, complete=False)


@pytest.mark.parametrize("text", ["99999999999999999999999", "9223372036854775808", "-9223372036854775809",
                                  "0x8000000000000000"])
def test_integers_outside_int64_are_refused(tmp_path, text):
    with pytest.raises(ConfigError) as e:
        _kinds(tmp_path, f"  i: {text}\n")
    assert "'quick.i'" in str(e.value) and "int64" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="'quick.steps'.*int64"):
        load(_write(tmp_path, f"sim: toy\nexperiment: e\nquick:\n  steps: {text.lstrip('-')}\n", "t.yaml"),
             "quick", {"e": Toy}, complete=False)
    with pytest.raises(ConfigError, match=r"'quick.sizes\[1\]'.*int64"):
        load(_write(tmp_path, f"sim: toy\nexperiment: e\nquick:\n  sizes: [1, {text}]\n", "u.yaml"),
             "quick", {"e": Toy}, complete=False)


@pytest.mark.parametrize("text", ["1" * 5000, "0x" + "f" * 5000, "-" + "9" * 4500])
def test_integers_too_long_to_print_are_refused_in_one_short_line(tmp_path, text):
    with pytest.raises(ConfigError) as e:
        _kinds(tmp_path, f"  i: {text}\n")
    msg = str(e.value)
    assert "'quick.i'" in msg and "int64" in msg and len(msg) < len(str(tmp_path)) + 200
    with pytest.raises(ConfigError, match="'quick.x'.*a finite number"):  # an int past the float range
        _kinds(tmp_path, f"  x: {text}\n", "b.yaml")


@pytest.mark.parametrize("text", ["!!int 1_000", "!!int 1:04", "!!bool yes", "!!float 1_0.5", "!!float 0x10"])
def test_explicit_tags_follow_yaml12_too(tmp_path, text):
    with pytest.raises(ConfigError, match="YAML 1.2"):
        _kinds(tmp_path, f"  s: {text}\n")


def test_int64_extremes_are_accepted(tmp_path):
    assert _kinds(tmp_path, "  i: 9223372036854775807\n").i == 2**63 - 1
    assert _kinds(tmp_path, "  i: -9223372036854775808\n", "b.yaml").i == -2**63


@pytest.mark.parametrize("text", ["9223372036854775808", "18446744073709551615", "99999999999999999999999",
                                  "-1"])
def test_seed_outside_jax_key_range_is_refused(tmp_path, text):
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, f"sim: toy\nexperiment: e\nseed: {text}\n"), "quick", {"e": Toy},
             complete=False)
    assert "'seed'" in str(e.value) and "2^63 - 1" in str(e.value)


def test_largest_seed_is_accepted(tmp_path):
    cfg = load(_write(tmp_path, "sim: toy\nexperiment: e\nseed: 9223372036854775807\n"), "quick", {"e": Toy},
               complete=False)
    assert cfg.seed == 2**63 - 1


def test_empty_list_for_a_sweep_is_refused(tmp_path):
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, "sim: toy\nexperiment: e\nquick:\n  sizes: []\n"), "quick", {"e": Toy},
             complete=False)
    assert "'quick.sizes'" in str(e.value) and "a non-empty list of" in str(e.value)
    with pytest.raises(ConfigError, match="'quick.xs'.*a non-empty list of"):
        _kinds(tmp_path, "  xs: []\n")


def test_non_utf8_config_is_a_config_error(tmp_path):
    p = tmp_path / "latin.yaml"
    p.write_bytes(b"sim: \xff\xfe\n")
    with pytest.raises(ConfigError) as e:
        read_yaml(p)
    assert str(p) in str(e.value) and "a UTF-8 text file" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("char", ["\x00", "\x07", "\ufeff\x1b"])
def test_control_characters_are_a_config_error(tmp_path, char):
    """A NUL byte (or another control character) in a config: one line naming the file, the offset and the
    character, never the YAML reader's traceback."""
    p = tmp_path / "ctrl.yaml"
    p.write_text(f"sim: seesaw{char}\nexperiment: lm\n")
    with pytest.raises(ConfigError) as e:
        read_yaml(p)
    assert str(p) in str(e.value) and "printable characters" in str(e.value) and "U+00" in str(e.value)
    assert "\n" not in str(e.value)


def _alias_bomb(levels=9, width=9):
    """The "billion laughs" document: a value of ``width**levels`` leaves written in a few hundred bytes."""
    anchors = ['&a0 ["lol"]'] + [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]"
                                 for i in range(1, levels + 1)]
    return "sim: toy\nexperiment: e\nquick:\n  lr: [" + ", ".join(anchors) + "]\n"


def test_alias_bomb_is_refused_fast(tmp_path):
    text = _alias_bomb()
    assert len(text.encode()) < 600
    p = _write(tmp_path, text)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as e:
        load(p, "quick", {"e": Toy}, complete=False)
    assert time.perf_counter() - t0 < 5
    assert "10000" in str(e.value) and len(str(e.value)) < len(str(p)) + 200 and "\n" not in str(e.value)


def test_recursive_alias_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="10000"):
        read_yaml(_write(tmp_path, "sim: &r [*r]\n"))


def test_long_values_are_cut_in_error_messages(tmp_path):
    long = "x" * 5000
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, f"sim: toy\nexperiment: e\nquick:\n  lr: {long}\n"), "quick", {"e": Toy},
             complete=False)
    msg = str(e.value)
    assert "'quick.lr'" in msg and "..." in msg and len(msg) < len(str(tmp_path)) + 200
    with pytest.raises(ConfigError) as e:
        text = f"sim: toy\nexperiment: e\nquick:\n  lr: [{', '.join(['1'] * 3000)}]\n"
        load(_write(tmp_path, text, "b.yaml"), "quick", {"e": Toy}, complete=False)
    assert "..." in str(e.value) and len(str(e.value)) < len(str(tmp_path)) + 200


def test_long_or_multiline_keys_stay_on_one_short_line(tmp_path):
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, f'sim: toy\nexperiment: e\n"{"k" * 900}\\nx": 1\n'), "quick", {"e": Toy},
             complete=False)
    assert "\n" not in str(e.value) and len(str(e.value)) < len(str(tmp_path)) + 400
    assert "top-level" in str(e.value)


def test_deep_nesting_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        read_yaml(_write(tmp_path, "sim: " + "[" * 5000 + "]" * 5000 + "\n"))


@dataclasses.dataclass(frozen=True)
class Checked:
    lo: float = 0.0
    hi: float = 1.0

    def __post_init__(self):
        if self.hi <= 0:
            raise ValueError(f"hi must be > 0, got {self.hi}")
        if self.lo >= self.hi:
            raise ValueError(f"lo must be below hi, got {self.lo} >= {self.hi}")


@pytest.mark.parametrize("body, key", [("params:\n  hi: -1\n", "params.hi"), ("quick:\n  hi: -1\n", "quick.hi"),
                                       ("quick:\n  lo: 2\n", "quick")])
def test_a_cross_field_check_naming_one_key_names_it(tmp_path, body, key):
    """A ``__post_init__`` refusal that names one parameter is reported under that parameter's key (and
    section); one naming several keeps the section."""
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, "sim: toy\nexperiment: e\n" + body), "quick", {"e": Checked}, complete=False)
    assert f"key '{key}'" in str(e.value) and "\n" not in str(e.value)


def test_an_integer_of_many_digits_is_refused_unconverted(tmp_path):
    """Python's ``int()`` of a long digit string takes quadratic time (minutes for a million digits): a
    literal past MAX_DIGITS digits is never converted, every integer field refuses it (quoted by its digit
    count), a float field reads the literal's float, and a file past MAX_BYTES is refused unread."""
    digits = "7" * 60000
    with pytest.raises(ConfigError) as e:
        load(_write(tmp_path, f"sim: toy\nexperiment: e\nquick:\n  sizes: [1, {digits}]\n"), "quick", {"e": Toy},
             complete=False)
    assert "'quick.sizes[1]'" in str(e.value) and "<an integer of 60000 digits>" in str(e.value)
    with pytest.raises(ConfigError, match="'quick.x'.*a finite number"):
        _kinds(tmp_path, f"  x: -{digits}\n", "b.yaml")
    assert _kinds(tmp_path, f"  x: {'1' * 150}\n", "c.yaml").x == float("1" * 150)
    assert _kinds(tmp_path, f"  i: {'0' * 150}12\n", "d.yaml").i == 12  # leading zeros are not digits
    big = _write(tmp_path, "sim: toy\nexperiment: e\n#" + "x" * (64 * 1024) + "\n", "e.yaml")
    with pytest.raises(ConfigError, match="at most 64 KiB"):
        read_yaml(big)
