"""Results on disk, one folder per scale: ``results/<scale>/<name>.npz`` (arrays) and
``results/<scale>/<name>.json`` (summary and provenance), so a quick run never touches a paper result.

A result is *current* only when its sidecar names the config hash and code hash asked for **and** the
npz on disk has the SHA-256 and the array names the sidecar records: a run killed between the two writes,
a truncated file or a pair from two different runs is never taken for a result. Every file is written
atomically (a temporary file in the same folder, then ``os.replace``), and the pair is written under a
per-result lock (``filelock``), so two runs of same-named configs cannot interleave their writes.

Long experiments store finished pieces under ``results/<scale>/.parts/<name>-<full run hash>/``: an
interrupted run resumes where it stopped, a code or config change starts afresh, and ``--force`` discards
them. Under ``jax.distributed`` a piece is resumed only when every process sees it (``agree``), so the
processes never pair different pieces in a collective.
"""

from __future__ import annotations

import fractions
import hashlib
import io
import json
import math
import os
import platform
import shutil
import subprocess
import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np
from filelock import FileLock

PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy", "scipy", "sympy", "networkx", "python-flint",
            "scikit-learn", "matplotlib")
REPO = Path(__file__).resolve().parent.parent
SCALES = ("quick", "paper")
_UMASK = os.umask(0)
os.umask(_UMASK)


class ResultError(Exception):
    """A result that is missing, damaged or cannot be written. ``str(err)`` is one line naming the file."""


class WriteError(ResultError):
    """A file or folder that cannot be written (read-only, full disk, a file where a folder should be): a
    problem of the place written to, which recomputing does not cure. ``str(err)`` is one line naming it."""


def scale_dir(root: str | Path, scale: str) -> Path:
    """The folder of one scale's results under ``root`` (``results/quick``, ``results/paper``).

    Raises:
      ValueError: ``scale`` is not one of :data:`SCALES`.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    return Path(root) / scale


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder + rename).

    Raises:
      ResultError: ``path`` exists and is not a regular file (a symlink, a FIFO, a device such as
        ``/dev/stdout``, a folder): the rename would replace it, so it is refused.
      WriteError: the write fails (a read-only folder, a full disk): one line naming ``path`` and the
        system's reason; no temporary file is left behind and an existing ``path`` is untouched.
    """
    p = Path(path)
    if p.is_symlink() or (p.exists() and not p.is_file()):
        raise ResultError(f"{p}: exists and is not a regular file (a link, device or folder); refusing to "
                          "replace it")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as e:
        raise WriteError(f"{p}: cannot be written ({e.strerror or e})") from None
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise WriteError(f"{p}: cannot be written ({e.strerror or e})") from None
        raise


def check_writable(folder: str | Path, what: str = "results") -> None:
    """Create ``folder`` if needed and prove a file can be written there, before any computation.

    Raises:
      WriteError: the folder cannot be created or written (one line naming it and ``what``).
    """
    p = Path(folder)
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p, prefix=".write-test.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise WriteError(f"{p}: cannot write {what} there ({e.strerror or e})") from None


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """The ``.npz`` serialisation of a name -> array mapping."""
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    return buf.getvalue()


def jsonable(x: Any) -> Any:
    """Plain JSON values: numpy/JAX scalars and arrays to lists, fractions to strings, tuples to lists,
    and non-finite floats to the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no NaN)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, int, str)) or x is None:
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    if isinstance(x, fractions.Fraction):
        return str(x)
    if hasattr(x, "tolist"):
        return jsonable(np.asarray(x).tolist())
    return str(x)


def dumps(obj: Any) -> bytes:
    """The one JSON writer of the project: :func:`jsonable` then strict JSON (never ``NaN``)."""
    return json.dumps(jsonable(obj), indent=2, sort_keys=True, allow_nan=False).encode()


def code_hash(files: list[str | Path]) -> str:
    """SHA-256 over the given source files (missing ones count as empty)."""
    h = hashlib.sha256()
    for f in sorted(map(str, files)):
        p = Path(f)
        h.update(f.encode())
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def git_commit() -> str:
    """The repository's HEAD commit, with ``+dirty`` when tracked files differ; ``unknown`` without git."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def versions() -> dict[str, str]:
    """Python and package versions, for provenance."""
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def paths(name: str, outdir: str | Path) -> tuple[Path, Path]:
    """``(npz, json)`` paths of result ``name`` in ``outdir`` (one scale's folder)."""
    return Path(outdir) / f"{name}.npz", Path(outdir) / f"{name}.json"


def lock(name: str, outdir: str | Path) -> FileLock:
    """The lock held while result ``name`` in ``outdir`` (an existing folder) is written or read as a
    pair."""
    return FileLock(str(Path(outdir) / f".{name}.lock"))


def save(name: str, arrays: dict[str, Any], meta: dict[str, Any], outdir: str | Path) -> dict[str, Any]:
    """Write the arrays (npz), then the sidecar (json) recording the npz's SHA-256 and array names, both
    atomically and under the result's lock. Returns the sidecar as written.

    Raises:
      WriteError: ``outdir`` or a file in it cannot be written (one line naming it and the reason).
    """
    npz, js = paths(name, outdir)
    blob = npz_bytes(arrays)
    meta = {**meta, "npz_sha256": hashlib.sha256(blob).hexdigest(), "arrays": sorted(arrays)}
    try:
        Path(outdir).mkdir(parents=True, exist_ok=True)
        held = lock(name, outdir)
        held.acquire()
    except OSError as e:
        raise WriteError(f"{outdir}: cannot write results there ({e.strerror or e})") from None
    try:
        write_atomic(npz, blob)
        write_atomic(js, dumps(meta))
    finally:
        held.release()
    return meta


def _read_pair(name: str, outdir: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    npz, js = paths(name, outdir)
    if not js.exists() or not npz.exists():
        missing = js if not js.exists() else npz
        raise ResultError(f"{missing}: no such result; run the simulation first")
    try:
        meta = json.loads(js.read_text())
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ResultError(f"{js}: damaged sidecar ({str(e)[:80]})") from None
    try:
        blob = npz.read_bytes()
    except OSError as e:
        raise ResultError(f"{npz}: cannot be read ({e.strerror})") from None
    if meta.get("npz_sha256") != hashlib.sha256(blob).hexdigest():
        raise ResultError(f"{npz}: does not match its sidecar {js.name} (damaged, or from another run)")
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ResultError(f"{npz}: damaged ({str(e)[:80]})") from None
    if sorted(arrays) != meta.get("arrays"):
        raise ResultError(f"{npz}: its arrays are not the ones its sidecar lists")
    return arrays, meta


def load(name: str, outdir: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a saved result, checked against its sidecar.

    Returns:
      ``(arrays, meta)``: name -> numpy array, and the sidecar dict.
    Raises:
      ResultError: missing, damaged, or an npz that is not the one its sidecar describes (one line).
    """
    if not Path(outdir).is_dir():
        raise ResultError(f"{paths(name, outdir)[0]}: no such result; run the simulation first")
    try:
        held = lock(name, outdir)
        held.acquire()
    except OSError:  # a read-only results folder: nobody can be writing there
        return _read_pair(name, outdir)
    try:
        return _read_pair(name, outdir)
    finally:
        held.release()


def is_current(name: str, config_hash: str, code: str, outdir: str | Path) -> bool:
    """True when a complete, intact result exists for this config hash and code hash."""
    try:
        _, meta = load(name, outdir)
    except ResultError:
        return False
    return meta.get("config_hash") == config_hash and meta.get("code_hash") == code


class Parts:
    """Resumable pieces of one experiment: ``parts.get(key, fn)`` returns the stored arrays of a
    finished piece or runs ``fn() -> dict[str, array]`` and stores it atomically (writer only).

    Pieces live in ``<outdir>/.parts/<name>-<run_hash>/`` with the *full* run hash (config + code), so a
    changed config or code never reuses another run's pieces. ``agree(flag) -> bool`` makes every process
    take the same decision (resume only when all processes see the piece); the default is single-process.
    """

    def __init__(self, name: str, run_hash: str, outdir: str | Path, writer: bool = True,
                 agree: Callable[[bool], bool] = bool):
        self.root = Path(outdir) / ".parts"
        self.name = name
        self.dir = self.root / f"{name}-{run_hash}"
        self.writer = writer
        self.agree = agree
        self.resumed: list[str] = []

    def _read(self, p: Path) -> dict[str, np.ndarray] | None:
        try:
            with np.load(p, allow_pickle=False) as f:
                return {k: f[k] for k in f.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            return None

    def get(self, key: str, fn: Callable[[], dict[str, Any]]) -> dict[str, np.ndarray]:
        p = self.dir / f"{key}.npz"
        stored = self._read(p) if p.exists() else None
        if self.agree(stored is not None):
            self.resumed.append(key)
            return stored
        out = {k: np.asarray(v) for k, v in fn().items()}
        if self.writer:
            write_atomic(p, npz_bytes(out))
        return out

    def discard(self) -> None:
        """Remove every stored piece of this result name, of any run hash (``--force``, or after a
        successful save), leftover temporary files included."""
        if not self.writer or not self.root.exists():
            return
        for d in self.root.glob(f"{self.name}-*"):
            if d.is_dir() and d.name[len(self.name) + 1:].isalnum():
                shutil.rmtree(d, ignore_errors=True)


def now() -> str:
    """Local time, ISO 8601 with offset."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
