"""Data shared by the simulations: real text read at run time from this machine, nothing downloaded."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np


def stdlib_text(n_chars: int) -> np.ndarray:
    """The first ``n_chars`` bytes of the standard library's top-level ``*.py`` files (sorted by name),
    as a ``[n_chars]`` uint8 array. Raises RuntimeError if the machine has less source than asked."""
    root = Path(sysconfig.get_paths()["stdlib"])
    chunks, total = [], 0
    for f in sorted(root.glob("*.py")):
        b = f.read_bytes()
        chunks.append(b)
        total += len(b)
        if total >= n_chars:
            break
    data = np.frombuffer(b"".join(chunks), np.uint8)[:n_chars]
    if data.size < n_chars:
        raise RuntimeError(f"only {data.size} characters of stdlib source under {root}, {n_chars} asked")
    return data
