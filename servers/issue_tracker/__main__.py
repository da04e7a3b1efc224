"""``python -m servers.issue_tracker --transport stdio|http``."""

from servers.kit.cli import main

main("issue_tracker")
