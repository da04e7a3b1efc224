"""``python -m servers.crm --transport stdio|http``."""

from servers.kit.cli import main

main("crm")
