"""The claims ledger and one module of claims per paper.

``python -m claims list`` lists the claims; ``python -m claims verify --scale quick|paper`` runs them
(see :mod:`claims.ledger`). Claims import ``theory`` (the mathematics) and ``sims`` (a figure's result,
through :func:`claims.ledger.figure_result`); nothing imports claims but its command line and the tests.
"""

import sims  # noqa: F401  (first: pins the host kernels before NumPy loads, see sims.portable)
