"""Seed calls: the initial state of an empty fixture, built through the server's own write tools.

A user's server may start empty (a fresh memory graph, an empty project): nothing for a request to
name. Synthesis then creates a few entities with the server's creating tools
(:func:`data.byo.sampling.seed_if_empty`) and hands the calls that succeeded to the backend
(:meth:`prove_jax.env.byo.ByoBackend.adopt`), which builds the fixture from them *once*: every later
session starts from that state. Gold results depend on it, so the calls travel with the dataset
(``<data_dir>/byo_seed.json``) and every stage that opens a pool on the dataset (SFT's gold-length
replay, GRPO rollouts, eval) rebuilds the same fixture from them at start-up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEED_FILE = "byo_seed.json"


@dataclass(frozen=True)
class SeedCall:
    """One write call of the seed state, arguments as the model would give them (``path_alias``)."""

    tool: str
    args: dict[str, Any]


def write_seed_calls(data_dir: Path, calls: dict[str, list[SeedCall]]) -> Path | None:
    """``<data_dir>/byo_seed.json`` for the servers that were seeded (none: no file)."""
    path = Path(data_dir) / SEED_FILE
    seeded = {name: [{"tool": c.tool, "args": c.args} for c in cs] for name, cs in sorted(calls.items()) if cs}
    if not seeded:
        path.unlink(missing_ok=True)
        return None
    path.write_text(json.dumps({"servers": seeded}, indent=1, sort_keys=True) + "\n")
    return path


def read_seed_calls(data_dir: Path | str | None) -> dict[str, list[SeedCall]]:
    """The seed calls a dataset was built on (``{}`` when it has none)."""
    if data_dir is None or not (path := Path(data_dir) / SEED_FILE).exists():
        return {}
    raw = json.loads(path.read_text())["servers"]
    return {name: [SeedCall(str(c["tool"]), dict(c["args"])) for c in cs] for name, cs in raw.items()}
