"""Mutation score of one paper's tests: ``make mutate PAPER=p`` (``python -m tests.mutation p``).

mutmut (https://mutmut.readthedocs.io, 3.x) plants one-line bugs in ``theory/<p>`` and the shared
``theory/numerics.py`` (an operator, a comparison, a constant + 1, a dropped argument, ``and`` for ``or``,
...) and runs, for each bug, the tests of that paper that execute the mutated function; a bug no test
notices is a surviving mutant. The score is killed / (mutants - listed equivalents), per mutated area;
the target is 90% (issue "Proofs by example that catch a wrong formula").

Run in ``build/mutate/<p>/``, a copy of the repository with its own ``[tool.mutmut]`` section, so that
papers never share mutmut's state. Each mutant runs in a process forked from a fork server that has not
run JAX (``process_isolation = "forkserver"``, warmed up by importing the libraries only): a compiled function traced before the fork
would otherwise hide the mutant behind JAX's cache.

Not mutated, by design: the text of error messages (``raise`` statements: the conditions that raise are
mutated, the wording is not) and decorated functions (mutmut 3 leaves ``@jax.jit`` and ``@lru_cache``
functions alone; they are listed by ``--list-skipped``).

Equivalent mutants (no input can tell them from the original) are listed with the reason in
``tests/mutation_equivalents.yaml``, keyed by paper, function and mutated line (not by mutmut's mutant
number, which shifts with every edit); a listing that matches no survivor is reported as stale.

``--sample K`` (``make mutate PAPER=p SAMPLE=K``) runs a seeded uniform sample of K of all the mutants and
scores it with a 95% Wilson interval: a complete run can take many hours, and a stopped one is biased
(mutmut runs the mutants with the fastest tests first).

Exit status: 0 when every area reaches the target, 1 when one does not, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml
from statsmodels.stats.proportion import proportion_confint

from claims import ledger

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.90
NUMERICS = "theory/numerics.py"

# Theory files and tests a paper shares with another toolkit: the Boolean toolkit is the LIF-SNN paper's.
EXTRA = {"lif_snn": (["theory/boolean.py"], ["tests/test_boolean.py"])}


def paper_files(paper: str) -> tuple[list[str], list[str]]:
    """``(theory globs, test files)`` of ``paper``, read off the layout: ``theory/<paper>.py`` or the
    package ``theory/<paper>/``, and ``tests/test_<paper>*.py`` (plus :data:`EXTRA`)."""
    own = f"theory/{paper}.py" if (ROOT / "theory" / f"{paper}.py").exists() else f"theory/{paper}/*"
    tests = sorted(t.relative_to(ROOT).as_posix() for t in (ROOT / "tests").glob(f"test_{paper}*.py"))
    extra_theory, extra_tests = EXTRA.get(paper, ([], []))
    return [own, *extra_theory], tests + extra_tests


SHARED_TESTS = ["tests/test_numerics.py"]
COPIED = ["theory", "sims", "claims", "figures", "paper_configs", "benchmarks", "tests", "pyproject.toml"]
# Statements not mutated: the wording of an error (the condition that raises is mutated) and the argument
# checks at the top of a public function (check_real, check_int, _check_*, relu_dag's _concrete_real (check_real
# letting JAX scalars through), and social choice's as_points and validate, whose string argument only names
# the input in the error: their bounds are tested by the refusal tests; in theory/numerics.py, where checking
# is the mathematics, the checks' bodies are mutated).
NOT_MUTATED = [r"^\s*raise\s", r"^\s*(\w+\s*(,\s*\w+\s*)*=\s*)?(_?check_\w+|_concrete_real|as_points|validate)\("]
# Imported once by the fork server, before any mutant: libraries and the project's packages. None of them
# starts a JAX backend on import (a backend started before the fork would hang the forked workers).
PRELOAD = ["numpy", "scipy.stats", "scipy.optimize", "scipy.special", "sympy", "flint", "statsmodels.api",
           "jax", "jax.numpy", "optax", "flax", "networkx", "sklearn", "matplotlib", "yaml", "hypothesis",
           "filelock", "tqdm", "pytest", "theory", "sims.runtime", "sims.cli", "claims.ledger"]
# The mutant a --sample run names to make mutmut generate every mutant and collect coverage: theory/numerics.py
# is mutated in every paper's run, and check_limit's first mutant always exists.
FIRST_MUTANT = "theory.numerics.x_check_limit__mutmut_1"
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
MEMORY_LIMIT = 12 << 30  # bytes of address space per mutmut process (see _limit_memory)


def mutmut_section(paper: str) -> str:
    """The ``[tool.mutmut]`` table for ``paper``: its theory files and the numerics, its tests only."""
    files, tests = paper_files(paper)
    cfg = {
        "source_paths": ["theory"],
        "only_mutate": files + [NUMERICS],
        "also_copy": [c for c in COPIED if c not in ("theory", "pyproject.toml")],
        "pytest_add_cli_args_test_selection": tests + SHARED_TESTS,
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-m", "not slow"],
        "do_not_mutate_patterns": NOT_MUTATED,
        "process_isolation": "forkserver",
        "forkserver_warmup": "import",
        "preload_modules_file": "preload.txt",
        "use_git_change_detection": False,
        "timeout_multiplier": 5.0,
        "timeout_constant": 30.0,
    }
    lines = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in cfg.items()]
    return "\n".join(lines) + "\n"


def prepare(paper: str, work: Path) -> None:
    """A fresh copy of the repository in ``work`` with the paper's mutmut table (previous state removed)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "out")
    for name in COPIED:
        src = ROOT / name
        (shutil.copytree(src, work / name, ignore=ignore) if src.is_dir() else shutil.copy2(src, work / name))
    with open(work / "pyproject.toml", "a") as f:
        f.write(mutmut_section(paper))
    (work / "preload.txt").write_text("\n".join(PRELOAD) + "\n")


def area_of(paper: str, module_path: str) -> str:
    """The scored area of a mutated file: ``theory/numerics.py`` apart, the paper's own files together."""
    return NUMERICS if module_path.endswith("numerics.py") else f"theory/{paper}"


def collect(paper: str, work: Path) -> dict[str, dict[str, str]]:
    """``{area: {mutant name: status}}`` from mutmut's meta files in ``work/mutants``."""
    from mutmut.stats import status_by_exit_code  # noqa: PLC0415 - the optional [mutate] extra

    out: dict[str, dict[str, str]] = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        rel = meta.relative_to(work / "mutants").as_posix()[: -len(".meta")]
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        area = out.setdefault(area_of(paper, rel), {})
        for name, code in codes.items():
            area[name] = status_by_exit_code[code]
    return out


def mutant_diff(work: Path, name: str) -> str:
    """The mutated line(s) of ``name`` as ``mutmut show`` prints them (lines starting with - or +)."""
    r = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=work, capture_output=True,
                       text=True, check=False)
    return "\n".join(ln for ln in r.stdout.splitlines()
                     if ln[:1] in "+-" and not ln.startswith(("+++", "---")))


def load_equivalents(paper: str) -> list[dict]:
    """``[{"function", "mutated", "reason"}]`` for ``paper`` and the shared numerics: a surviving mutant
    of ``function`` (the dotted name, e.g. ``theory.seesaw.discrete_serial_step_reduction``) whose mutated
    line is ``mutated`` is equivalent, for ``reason``. Keyed by content, not by mutmut's mutant number,
    which shifts with edits."""
    path = ROOT / "tests" / "mutation_equivalents.yaml"
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    return list((data or {}).get(paper, [])) + list((data or {}).get("numerics", []))


def function_of(mutant: str) -> str:
    """``theory.seesaw.x_f__mutmut_3`` -> ``theory.seesaw.f`` (methods: ``Class.f``)."""
    head = mutant.rsplit("__mutmut_", 1)[0]
    module, _, last = head.rpartition(".")
    if last.startswith("xǁ"):  # a method: xǁClassǁname
        return f"{module}.{last[2:].replace('ǁ', '.')}"
    return f"{module}.{last[2:] if last.startswith('x_') else last}"


def is_listed(mutant: str, diff: str, equivalents: list[dict]) -> bool:
    added = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+")]
    return any(e["function"] == function_of(mutant) and e["mutated"].strip() in added for e in equivalents)


CHECK_CALL = re.compile(r"\b(_?check_\w+|_concrete_real|as_points|validate)\(")


def _without_strings(line: str) -> str:
    return re.sub(r"\"[^\"]*\"|'[^']*'", '""', line)


def is_excluded(diff: str) -> bool:
    """Whether a mutant is one the policy does not score: its mutated line is one that :data:`NOT_MUTATED`
    leaves alone (a run made before a pattern was added generated mutants there), or it changes only a
    string passed on a line that calls an argument check (``check_*``, ``_concrete_real``, ``as_points``,
    ``validate``: the name the check's error message gives)."""
    removed = [ln[1:] for ln in diff.splitlines() if ln.startswith("-")]
    added = [ln[1:] for ln in diff.splitlines() if ln.startswith("+")]
    if removed and all(any(re.search(p, ln) for p in NOT_MUTATED) for ln in removed):
        return True
    return (bool(removed) and len(removed) == len(added) and all(CHECK_CALL.search(_without_strings(ln)) for ln in removed)
            and [_without_strings(ln) for ln in removed] == [_without_strings(ln) for ln in added])


def _limit_memory() -> None:
    """Address-space limit for mutmut and every worker it forks (inherited): half the machine's memory,
    at most ``MEMORY_LIMIT``. A mutant that allocates without bound (a step count multiplied instead of
    divided) then fails its test with MemoryError instead of taking the machine down."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cap = min(MEMORY_LIMIT, total // 2)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="make mutate", description=__doc__.splitlines()[0])
    papers = ledger.papers()
    ap.add_argument("paper", help=f"one of {', '.join(papers)}")
    ap.add_argument("--report-only", action="store_true", help="score the last run again, running nothing")
    ap.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--sample", type=int, default=0, metavar="K",
                    help="run a uniform random sample of K mutants (score with a 95%% interval) instead of all")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    args = ap.parse_args(argv)
    if args.paper not in papers:
        print(f"make mutate: PAPER must be one of {', '.join(papers)}; got {args.paper!r}", file=sys.stderr)
        return 2
    if args.sample < 0:
        print(f"make mutate: SAMPLE must be a count of mutants >= 1 (0: run them all); got {args.sample}",
              file=sys.stderr)
        return 2
    work = ROOT / "build" / "mutate" / args.paper
    sample_file = work / "sample.json"
    if not args.report_only:
        prepare(args.paper, work)
        env = dict(os.environ, PBE_PROGRESS="0", JAX_PLATFORMS="cpu")

        def mutmut_run(*names: str) -> bool:
            """Run mutmut (on ``names`` only, if given); False, with one line, when mutmut itself failed."""
            r = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(args.max_children),
                                *names], cwd=work, env=env, check=False, preexec_fn=_limit_memory)
            if r.returncode not in (0, 1):
                print(f"make mutate: mutmut exited with {r.returncode} (see its output above)", file=sys.stderr)
            return r.returncode in (0, 1)

        if args.sample:
            # Generate every mutant and the test coverage (mutmut runs one named mutant to get there), then
            # run a uniform sample of all of them: an unbiased estimate of the score, where a run stopped
            # early is biased (mutmut runs the mutants with the fastest tests first).
            if not mutmut_run(FIRST_MUTANT):
                return 1
            names = sorted(n for area in collect(args.paper, work).values() for n in area)
            rng = np.random.default_rng(args.seed)
            picked = sorted(rng.choice(names, size=min(args.sample, len(names)), replace=False).tolist())
            sample_file.write_text(json.dumps({"seed": args.seed, "of": len(names), "names": picked}))
            if not mutmut_run(*picked):
                return 1
        elif not mutmut_run():
            return 1
    elif not (work / "mutants").exists():
        print(f"make mutate: no previous run in {work.relative_to(ROOT)}", file=sys.stderr)
        return 2

    equivalents = load_equivalents(args.paper)
    status = collect(args.paper, work)
    sample = json.loads(sample_file.read_text()) if sample_file.exists() else None
    if sample:  # score the sampled mutants only (the one run to generate them is not part of the sample)
        keep = set(sample["names"])
        status = {a: {n: st for n, st in by.items() if n in keep} for a, by in status.items()}
        print(f"\nuniform sample of {len(keep)} of the {sample['of']} mutants (seed {sample['seed']}); "
              "95% Wilson intervals (statsmodels)")
    ok = True
    print(f"\nmutation score, {args.paper} (mutmut; target {TARGET:.0%} of non-equivalent mutants killed)")
    used = set()
    for area, by_name in status.items():
        unchecked = sorted(n for n, s in by_name.items() if s == "not checked")
        by_name = {n: s for n, s in by_name.items() if s != "not checked"}
        survivors = sorted(n for n, s in by_name.items() if s not in KILLED)
        diffs = {n: mutant_diff(work, n) for n in survivors}
        # a run made before a statement joined NOT_MUTATED still holds its mutants: its survivors there are
        # not scored, as in a fresh run (its killed ones there stay counted: such a run's score reads high)
        excluded = [n for n in survivors if is_excluded(diffs[n])]
        survivors = [n for n in survivors if n not in excluded]
        by_name = {n: s for n, s in by_name.items() if n not in excluded}
        equiv = [n for n in survivors if is_listed(n, diffs[n], equivalents)]
        used |= {(function_of(n), ln[1:].strip()) for n in equiv for ln in diffs[n].splitlines()
                 if ln.startswith("+")}
        scored = len(by_name) - len(equiv)
        killed = len(by_name) - len(survivors)
        score = killed / scored if scored else 1.0
        ok &= score >= TARGET and not unchecked
        interval = ""
        if sample and scored:
            lo, hi = proportion_confint(killed, scored, alpha=0.05, method="wilson")
            interval = f", 95% interval {lo:.1%} to {hi:.1%}"
        print(f"  {area}: {killed}/{scored} killed ({score:.1%}{interval}); {len(by_name)} mutants, "
              f"{len(equiv)} equivalent (tests/mutation_equivalents.yaml)"
              + (f"; INCOMPLETE: {len(unchecked)} not checked (run interrupted)" if unchecked else ""))
        for n in survivors:
            if n not in equiv:
                print(f"    {by_name[n]}: {n}\n      " + diffs[n].replace("\n", "\n      "))
    for e in [] if sample else equivalents:  # a sample holds a few of the listed mutants only
        if (e["function"], e["mutated"].strip()) not in used:
            print(f"  listed as equivalent but not a survivor now (stale?): {e['function']}: {e['mutated']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
