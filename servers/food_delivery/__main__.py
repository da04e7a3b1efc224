"""``python -m servers.food_delivery --transport stdio|http``."""

from servers.kit.cli import main

main("food_delivery")
