"""``python -m servers.budget --transport stdio|http``."""

from servers.kit.cli import main

main("budget")
