"""``python -m servers.payments --transport stdio|http``."""

from servers.kit.cli import main

main("payments")
