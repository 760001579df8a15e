"""``python -m sims.mdm_variance --config paper_configs/<figure>.yaml [--scale quick|paper]``."""

from sims import cli

raise SystemExit(cli.main("sims.mdm_variance"))
