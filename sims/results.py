"""Results on disk: ``results/<name>.npz`` (arrays) + ``results/<name>.json`` (summary and provenance).

Every write is atomic (a temporary file in the same folder, then ``os.replace``), and the JSON sidecar is
written last, so a result whose sidecar exists is complete. Long experiments store finished parts under
``results/.parts/<name>-<hash>/`` so that an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import subprocess
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy", "scipy", "sympy", "networkx", "python-flint",
            "scikit-learn", "matplotlib")
REPO = Path(__file__).resolve().parent.parent
_UMASK = os.umask(0)
os.umask(_UMASK)


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder + rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
    return buf.getvalue()


def json_default(x):
    if hasattr(x, "tolist"):
        return np.asarray(x).tolist()
    return str(x)


def code_hash(files: list[str | Path]) -> str:
    """SHA-256 over the given source files (missing ones count as empty)."""
    h = hashlib.sha256()
    for f in sorted(map(str, files)):
        p = Path(f)
        h.update(f.encode())
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def paths(name: str, outdir: str | Path = "results") -> tuple[Path, Path]:
    return Path(outdir) / f"{name}.npz", Path(outdir) / f"{name}.json"


def save(name: str, arrays: dict[str, Any], meta: dict[str, Any], outdir: str | Path = "results") -> None:
    """Atomically write the arrays (npz) and then the sidecar (json)."""
    npz, js = paths(name, outdir)
    write_atomic(npz, npz_bytes(arrays))
    write_atomic(js, json.dumps(meta, indent=2, sort_keys=True, default=json_default).encode())


def load(name: str, outdir: str | Path = "results") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a saved result. Raises FileNotFoundError naming the missing file."""
    npz, js = paths(name, outdir)
    if not js.exists() or not npz.exists():
        raise FileNotFoundError(f"no complete result {npz} + {js}; run the simulation first")
    meta = json.loads(js.read_text())
    with np.load(npz) as f:
        arrays = {k: f[k] for k in f.files}
    return arrays, meta


def is_current(name: str, config_hash: str, code: str, outdir: str | Path = "results") -> bool:
    """True when a complete result exists for this config hash and code hash."""
    npz, js = paths(name, outdir)
    if not (npz.exists() and js.exists()):
        return False
    try:
        meta = json.loads(js.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return meta.get("config_hash") == config_hash and meta.get("code_hash") == code


class Parts:
    """Resumable pieces of one experiment: ``parts.get(key, fn)`` returns the stored arrays of a
    finished piece or runs ``fn() -> dict[str, array]`` and stores it atomically (process 0 only)."""

    def __init__(self, name: str, run_hash: str, outdir: str | Path = "results", writer: bool = True):
        self.dir = Path(outdir) / ".parts" / f"{name}-{run_hash[:16]}"
        self.writer = writer
        self.resumed: list[str] = []

    def get(self, key: str, fn: Callable[[], dict[str, Any]]) -> dict[str, np.ndarray]:
        p = self.dir / f"{key}.npz"
        if p.exists():
            with np.load(p) as f:
                self.resumed.append(key)
                return {k: f[k] for k in f.files}
        out = {k: np.asarray(v) for k, v in fn().items()}
        if self.writer:
            write_atomic(p, npz_bytes(out))
        return out

    def clear(self) -> None:
        if self.writer and self.dir.exists():
            for f in self.dir.glob("*.npz"):
                f.unlink()
            self.dir.rmdir()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
