"""A schema-aware random policy: the no-model baseline that exercises live servers.

It grounds arguments in the episode's real state — ids and names harvested from discovery tools and
earlier results, matched by parameter name — so a good share of its calls succeed and the rest fail
in realistic, state-dependent ways. Used by the launch demo and as a baseline in tests.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections import defaultdict
from typing import Any

from prove_jax.env.pool import Episode


def harvest(value: Any, into: dict[str, list[Any]], key: str | None = None) -> None:
    """Collect scalar values by field name from any JSON result."""
    if isinstance(value, dict):
        for k, v in value.items():
            harvest(v, into, k)
    elif isinstance(value, list):
        for v in value[:50]:
            harvest(v, into, key)
    elif key is not None and isinstance(value, str | int | float) and not isinstance(value, bool):
        bucket = into[key]
        if value not in bucket and len(bucket) < 200:
            bucket.append(value)


def sample_value(name: str, prop: dict[str, Any], seen: dict[str, list[Any]], rng: random.Random) -> Any:
    if "enum" in prop:
        return rng.choice(prop["enum"])
    if seen.get(name):
        return rng.choice(seen[name])
    kind = prop.get("type", "string")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        lo = prop.get("minimum", prop.get("exclusiveMinimum", 0))
        hi = prop.get("maximum", max(lo + 100, 100))
        value = rng.randint(int(lo) + 1, int(min(hi, lo + 500)))
        return value if kind == "integer" else float(value)
    if kind == "array":
        item = prop.get("items", {})
        return [sample_value(name.rstrip("s"), item, seen, rng) for _ in range(rng.randint(1, 2))]
    if kind == "object":
        return {}
    return rng.choice(seen.get("name") or ["test"])


class RandomPolicy:
    """Draws (tool, arguments) from the visible tools, grounded in harvested state values."""

    def __init__(self, tools: list[dict[str, Any]], seed: int) -> None:
        self.tools = tools
        self.rng = random.Random(seed)
        self.seen: dict[str, list[Any]] = defaultdict(list)

    def observe(self, result_text: str) -> None:
        with contextlib.suppress(json.JSONDecodeError, TypeError):
            harvest(json.loads(result_text), self.seen)

    def next_call(self) -> tuple[str, dict[str, Any]]:
        fn = self.rng.choice(self.tools)["function"]
        schema = fn["parameters"]
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        args = {
            p: sample_value(p, props[p], self.seen, self.rng)
            for p in props
            if p in required or self.rng.random() < 0.3
        }
        return fn["name"], args


async def ground(ep: Episode, policy: RandomPolicy, discovery: list[str]) -> None:
    """Let the policy see the live state through the domain's discovery tools."""
    for name in discovery:
        res = await ep.call(name, {}, allow_hidden=True)
        if not res.is_error:
            policy.observe(res.text)
