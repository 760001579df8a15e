"""The mathematics of each paper, one module (or package) per paper: pure functions, symbolic (sympy,
python-flint) and numeric (numpy, JAX, scipy, networkx). It imports no simulation or claims code (a
contract checked by import-linter in the tests); the claims live in :mod:`claims`.

Importing this package changes no global JAX setting; functions that need float64 say so and enable it
locally.
"""
