"""``python -m sims.seesaw --config paper_configs/seesaw_<figure>.yaml [--scale quick|paper]``."""

from sims import cli

raise SystemExit(cli.main("sims.seesaw"))
