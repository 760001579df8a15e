"""``python -m sims.lif_snn --config paper_configs/<figure>.yaml [--scale quick|paper]``."""

from sims import cli

raise SystemExit(cli.main("sims.lif_snn"))
