"""``python -m servers.maps --transport stdio|http``."""

from servers.kit.cli import main

main("maps")
