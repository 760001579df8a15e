"""``python -m sims.social_choice --config paper_configs/social_choice_<figure>.yaml [--scale quick|paper]``."""

from sims import cli

raise SystemExit(cli.main("sims.social_choice"))
