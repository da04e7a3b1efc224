from servers.kit.cli import main

main("retail_chain")
