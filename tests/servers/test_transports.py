"""Every tool of every domain through the official ``mcp.Client`` over in-process, stdio and HTTP.

For each transport: ``tools/list`` shows exactly the user-visible tools with valid schemas, helpers
stay hidden but callable by name, and the domain's smoke scenario (a realistic session that succeeds
with every user tool) runs over that transport.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters

from servers import PAPER_TOOL_COUNTS
from servers.kit.mcp_adapter import build_server
from tests.servers.harness import ALL_DOMAINS, free_port, mcp_call, run, runtime, scenario, start_http_server

TRANSPORTS = ("inprocess", "stdio", "http")


@pytest.fixture(scope="module")
def http_urls() -> Iterator[dict[str, str]]:
    procs, urls = [], {}
    try:
        for domain in ALL_DOMAINS:
            port = free_port()
            procs.append(start_http_server(domain, port))
            urls[domain] = f"http://127.0.0.1:{port}/mcp"
        yield urls
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=10)


@asynccontextmanager
async def connect(domain: str, transport: str, urls: dict[str, str]) -> Any:
    if transport == "inprocess":
        target: Any = build_server(runtime(domain))
    elif transport == "stdio":
        target = StdioServerParameters(command=sys.executable, args=["-m", f"servers.{domain}"])
    else:
        target = urls[domain]
    async with Client(target, cache=None) as client:
        yield client


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_every_tool_listed_and_exercised(domain: str, transport: str, http_urls: dict[str, str]) -> None:
    async def go() -> None:
        async with connect(domain, transport, http_urls) as client:
            listed = (await client.list_tools()).tools
            assert len(listed) == PAPER_TOOL_COUNTS[domain]
            expected = {s.name for s in runtime(domain).table.specs.values() if s.visible}
            assert {t.name for t in listed} == expected
            for tool in listed:
                Draft202012Validator.check_schema(tool.input_schema)
                assert tool.input_schema["type"] == "object"
            # hidden discovery/helper tools are callable by name
            info = await client.call_tool(f"{domain}_server_info", {})
            assert not info.is_error and f'"domain": "{domain}"' in info.content[0].text
            seen: set[str] = set()
            await scenario(domain)(mcp_call(client, f"smoke-{transport}", 0, seen))
            assert expected <= seen, f"not exercised over {transport}: {sorted(expected - seen)}"

    run(go())


def test_http_binds_loopback_with_dns_rebinding_protection(http_urls: dict[str, str]) -> None:
    url = http_urls[ALL_DOMAINS[0]]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    evil = httpx.post(url, json=body, headers={**headers, "Host": "evil.example:80"}, timeout=10)
    assert evil.status_code in (400, 403, 421), evil.status_code


@pytest.mark.parametrize("domain", ALL_DOMAINS[:1])
def test_with_helpers_flag_lists_hidden_tools(domain: str) -> None:
    async def go() -> None:
        async with Client(build_server(runtime(domain), with_helpers=True), cache=None) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert f"{domain}_session_snapshot" in names
            assert len(names) > PAPER_TOOL_COUNTS[domain]

    run(go())
