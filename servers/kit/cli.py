"""``python -m servers.<domain> --transport stdio|http [--seed S] [--with-helpers]``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from servers.kit.mcp_adapter import build_server
from servers.kit.runtime import DomainRuntime


def load_domain_runtime(domain_name: str, seed: int = 0):
    """Import ``servers.<domain_name>`` and wrap its ``domain`` in a runtime."""
    module = importlib.import_module(f"servers.{domain_name}")
    return DomainRuntime(module.domain, default_seed=seed)


def main(domain_name: str, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=f"python -m servers.{domain_name}", description=__doc__)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--seed", type=int, default=0, help="seed of the default session's world")
    parser.add_argument("--with-helpers", action="store_true", help="list discovery/helper tools too")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (loopback by default)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    runtime = load_domain_runtime(domain_name, args.seed)
    runtime.sessions.world(args.seed)  # build the default world before the first request
    server = build_server(runtime, with_helpers=args.with_helpers)
    if args.transport == "stdio":
        server.run("stdio")
        return

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"{args.host}:{args.port}", f"127.0.0.1:{args.port}", f"localhost:{args.port}"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )
    app = server.streamable_http_app(
        streamable_http_path=args.path, json_response=True, transport_security=security, host=args.host
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
