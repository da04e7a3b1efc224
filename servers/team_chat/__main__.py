"""``python -m servers.team_chat --transport stdio|http``."""

from servers.kit.cli import main

main("team_chat")
