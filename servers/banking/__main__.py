"""``python -m servers.banking --transport stdio|http``."""

from servers.kit.cli import main

main("banking")
