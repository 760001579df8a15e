"""Plotting only: each ``figures/<paper>.py`` reads saved results and never trains.

``python -m figures <name> --scale S`` renders ``results/S/<name>.npz`` to ``figures/out/S/<name>.png``
and ``.pdf``.
"""
