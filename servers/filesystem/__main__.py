"""``python -m servers.filesystem --transport stdio|http``."""

from servers.kit.cli import main

main("filesystem")
