from servers.kit.cli import main

main("trading")
