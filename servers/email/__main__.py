"""``python -m servers.email --transport stdio|http``."""

from servers.kit.cli import main

main("email")
