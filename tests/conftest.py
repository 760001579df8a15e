"""Test session setup and the shared toy fixtures.

float64 and partitionable threefry are on, as in every entry point (sims.runtime). ``toy_sim`` registers
a tiny simulation module ``sims.toy`` (no compilation, counts its runs) so that the results machinery can
be tested in milliseconds; ``toy_ctx`` builds the :class:`sims.cli.Context` an experiment receives.
"""

import sims  # noqa: F401, I001  (first: pins the host kernels before NumPy loads, see sims.portable)

import contextlib
import dataclasses
import importlib
import io
import os
import queue
import subprocess
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("PBE_PROGRESS", "0")
# Every program goes to the persistent compilation cache, not only those compiling for 0.5 s or more (the runs'
# setting, sims.xla.CACHE_MIN_COMPILE_S): the suite and the processes it starts compile hundreds of small
# programs, which a warm rerun then reads back.
os.environ.setdefault("PBE_CACHE_MIN_COMPILE_S", "0")

import jax  # noqa: E402
from sims import cli, results, runtime  # noqa: E402
from sims.config import RunConfig, param  # noqa: E402

runtime.setup()


def batch_calls(n: int) -> tuple[int, int]:
    """``(calls, rows per call)`` of a batch of ``n`` seeds or runs in this test process: k = ceil(n / 8)
    entries per device per compiled call (the rule the README states for runtime.map_batch), padded to
    k x devices rows per call, so ceil(n / (k x devices)) calls. Typed in from the stated rule, for the
    plan tests' call counts and per-call FLOPs."""
    rows = -(-n // 8) * jax.device_count()
    return -(-n // rows), rows


@dataclasses.dataclass(frozen=True)
class ToyParams:
    n: int = param(4, ge=1)
    scale: float = param(1.0, gt=0)
    poison: bool = False


def _toy_module() -> types.ModuleType:
    mod = types.ModuleType("sims.toy")
    mod.calls = []

    def run(p: ToyParams, ctx) -> dict:
        """Arrays: ``x [n]`` (``arange(n) * scale``, NaN first when ``poison``), ``y [2]``, ``s [n]`` (one
        normal draw per seed from the root seed; its seed axis is 0)."""
        mod.calls.append(p)
        a = ctx.parts.get("a", lambda: {"x": np.arange(p.n) * p.scale})
        b = ctx.parts.get("b", lambda: {"y": np.array([p.n, p.scale])})
        x = a["x"].astype(float)
        if p.poison:
            x[0] = np.nan
        s = np.random.default_rng(ctx.config.seed).normal(size=p.n)
        return {"x": x, "y": b["y"], "s": s}

    mod.run = run
    mod.EXPERIMENTS = {"toy": cli.Experiment(ToyParams, run, seed_axes={"s": 0})}
    return mod


@pytest.fixture
def toy_sim(monkeypatch, tmp_path):
    """``(module, write_config)``: the registered ``sims.toy`` and a function writing a toy config
    ``write_config(name="toy", **quick_params) -> Path`` (every parameter written, at both scales)."""
    mod = _toy_module()
    monkeypatch.setitem(sys.modules, "sims.toy", mod)

    def write_config(name="toy", n=4, scale=1.0, poison=False, paper_n=None):
        p = tmp_path / "configs" / f"{name}.yaml"
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"sim: toy\nexperiment: toy\nseed: 0\nparams:\n  scale: {scale}\n  poison: "
                     f"{str(poison).lower()}\nquick:\n  n: {n}\npaper:\n  n: {paper_n or 2 * n}\n")
        return p

    return mod, write_config


@pytest.fixture
def toy_ctx(tmp_path):
    """``make(params, sim="toy", experiment="toy", seed=0) -> Context`` on the default mesh, with its
    resumable pieces in ``tmp_path``."""

    def make(params, sim="toy", experiment="toy", seed=0):
        cfg = RunConfig(str(tmp_path / f"{sim}.yaml"), f"{sim}_{experiment}", sim, experiment, "quick", seed,
                        params)
        parts = results.Parts(cfg.name, "0" * 64, tmp_path, True)
        return cli.Context(cfg, runtime.make_mesh(), parts, {})

    return make


STARTUP_S = 180.0  # allowance for the fresh interpreter to import its prelude (JAX) on a loaded machine


def _attribute_calls(prelude: str, stmts: list[str]) -> None:
    """mutmut's coverage pass (``make mutate``) records which test calls which function, in this process
    only: a statement run in a child interpreter would leave its test unselected for the mutants of the
    functions it calls, although the child does run them (it inherits MUTANT_UNDER_TEST). So in that pass
    the statements also run here, on the unmutated code, where they refuse at once or finish."""
    scope: dict = {}
    exec(prelude, scope)  # noqa: S102 - the tests' own statements
    for s in stmts:
        try:
            exec(s, scope)  # noqa: S102
        except Exception:  # noqa: BLE001 - the refusals are the point; the child judges them
            pass


def statement_outcomes(prelude: str, stmts: list[str], timeout: float = 20) -> list[str]:
    """Run each statement after ``prelude`` in one fresh interpreter (4 GiB address space); the outcome of
    each is ``'returned'`` (or what it printed) or ``'ExcType: message'``. A statement still running
    ``timeout`` seconds after the previous one finished fails the test, naming it: the shared check that
    public functions finish in bounded time or refuse, naming their limit. The prelude (imports) has
    its own allowance, :data:`STARTUP_S`, so a slow start-up is not taken for a hanging statement."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        _attribute_calls(prelude, stmts)
    done = "__statement_done__"
    body = "".join(f"try:\n    {s}\nexcept Exception as e:\n    print(f'{{type(e).__name__}}: {{e}}', flush=True)\n"
                   f"else:\n    print('returned', flush=True)\nprint({done!r}, flush=True)\n" for s in stmts)
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n" + prelude
            + f"\nprint({done!r}, flush=True)\n" + body)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[1])
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln.rstrip("\n")) for ln in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    out: list[str] = []
    for k in range(-1, len(stmts)):  # -1: the prelude
        limit = STARTUP_S if k < 0 else timeout
        while True:
            try:
                ln = lines.get(timeout=limit)
            except queue.Empty:
                proc.kill()
                what = "the prelude" if k < 0 else repr(stmts[k])
                pytest.fail(f"{what} still running after {limit} s")
            if ln is None:
                err = proc.stderr.read()
                proc.wait()
                pytest.fail(f"the interpreter exited (status {proc.returncode}) during "
                            f"{'the prelude' if k < 0 else repr(stmts[k])}: {err[-3000:]}")
            if ln == done:
                break
            if k >= 0:
                out.append(ln)
    proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read()[-3000:]
    return out


def outcomes_by_statement(prelude: str, stmts: list[str], timeout: float = 20) -> dict[str, str]:
    """:func:`statement_outcomes` keyed by statement: ``{stmt: outcome}``, every statement in one interpreter
    (one start-up for a whole parametrized table; each statement must print at most its outcome line)."""
    return dict(zip(stmts, statement_outcomes(prelude, stmts, timeout), strict=True))


_MAINS = {"sims": "sims.__main__", "figures": "figures.__main__", "figures.build": "figures.build",
          "claims": "claims.__main__"}


def run_main(module: str, *argv: str) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGV`` through the module's ``main`` in this process, without an interpreter
    start-up (those are tested in test_entry_points.py): a ``CompletedProcess`` with the exit status and
    what was printed. MODULE: sims, figures, figures.build or claims."""
    main = importlib.import_module(_MAINS[module]).main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse's own refusals
            code = e.code
    return subprocess.CompletedProcess([module, *argv], code, out.getvalue(), err.getvalue())
