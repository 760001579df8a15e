"""Simulations behind the figures, one module per paper, sharing the runtime in ``sims.runtime``.

Run one: ``python -m sims.<paper> --config paper_configs/<name>.yaml [--scale quick|paper]``.
"""
