"""``python -m servers.travel_booking --transport stdio|http``."""

from servers.kit.cli import main

main("travel_booking")
