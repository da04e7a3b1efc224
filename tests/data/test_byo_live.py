"""data.byo against a real server of ours over stdio, kit metadata hidden: the listing comes from the
official SDK client (``_meta`` dropped), calls go through a pool episode. Probing must recover a
known edge (``list_accounts`` -> ``get_account_balance``: account ids) and reject a non-edge
(``list_accounts`` -> ``get_customer_profile``: an account id names no customer)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp import StdioServerParameters

from data.byo.discovery import discover
from data.byo.graph import probe_edges
from data.byo.probe import Prober
from data.byo.protocol import EpisodeSession, sdk_listing
from data.byo.schema import infer_shapes
from prove_jax.env.pool import MCPPool

ROOT = Path(__file__).resolve().parents[2]
KEEP = ("get_customer_profile", "list_accounts", "get_account_balance")


async def _probe() -> tuple[list, set[tuple[str, str]]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "servers.banking", "--transport", "stdio"],
                                   cwd=str(ROOT))
    listing = await sdk_listing(params)
    shapes = {n: s for n, s in infer_shapes(discover(listing)).items() if n in KEEP}
    pool = MCPPool.from_spec(["banking"], "stdio")
    async with pool, pool.episode(["banking"], seed=0) as ep:
        result = await Prober(shapes, EpisodeSession(ep), max_rounds=2).probe()
    return listing, {(e.producer, e.consumer) for e in probe_edges(shapes, result)}


def test_banking_over_stdio_recovers_an_edge_and_rejects_a_non_edge() -> None:
    listing, pairs = asyncio.run(_probe())
    assert all("io.prove" not in str(t) for t in listing)  # nothing of the kit's metadata came in
    assert ("list_accounts", "get_account_balance") in pairs
    assert ("list_accounts", "get_customer_profile") not in pairs
    assert ("get_account_balance", "list_accounts") not in pairs  # an echo produces nothing
