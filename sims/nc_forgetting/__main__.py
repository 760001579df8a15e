"""``python -m sims.nc_forgetting --config paper_configs/<figure>.yaml [--scale quick|paper]``."""

from sims import cli

raise SystemExit(cli.main("sims.nc_forgetting"))
