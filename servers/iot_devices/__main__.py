"""``python -m servers.iot_devices --transport stdio|http``."""

from servers.kit.cli import main

main("iot_devices")
