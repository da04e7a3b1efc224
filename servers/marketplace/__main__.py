"""``python -m servers.marketplace --transport stdio|http``."""

from servers.kit.cli import main

main("marketplace")
