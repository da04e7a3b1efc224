"""``python -m servers.video_meeting --transport stdio|http``."""

from servers.kit.cli import main

main("video_meeting")
