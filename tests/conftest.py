"""Test session setup: float64 and partitionable threefry on, as in every entry point (sims.runtime)."""

import os

os.environ.setdefault("PBE_PROGRESS", "0")

from sims import runtime  # noqa: E402

runtime.setup()
