"""Plotting only: each ``figures/<paper>.py`` reads saved results and never trains.

``python -m figures <name> --scale S`` renders ``results/S/<name>.npz`` to ``figures/out/S/<name>.png``
and ``.pdf``.
"""

import sims  # noqa: F401  (first: pins the host kernels before NumPy loads, see sims.portable)
