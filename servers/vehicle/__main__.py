"""``python -m servers.vehicle --transport stdio|http``."""

from servers.kit.cli import main

main("vehicle")
