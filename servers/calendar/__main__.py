"""``python -m servers.calendar --transport stdio|http``."""

from servers.kit.cli import main

main("calendar")
