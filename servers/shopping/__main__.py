"""``python -m servers.shopping --transport stdio|http``."""

from servers.kit.cli import main

main("shopping")
