"""Plotting only: each ``figures/<paper>.py`` reads saved results and never trains.

``python -m figures <name>`` renders ``results/<name>.npz`` to ``figures/out/<name>.png`` and ``.pdf``.
"""
