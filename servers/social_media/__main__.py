"""``python -m servers.social_media --transport stdio|http``."""

from servers.kit.cli import main

main("social_media")
