"""Symbolic and numeric checks of the papers' claims, one module per paper, registered in the ledger.

``python -m theory list`` lists the claims; ``python -m theory verify`` runs them (see ``theory.ledger``).
Importing this package changes no global JAX setting; a module that needs float64 enables it through
``sims.runtime.setup`` before creating arrays.
"""
