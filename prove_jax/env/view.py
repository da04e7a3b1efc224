"""The tool view of an episode: which tool schemas the model is shown, and how verbosely.

With the full tool lists of the paper's data (16–67 tools per example), tool schemas are ~84 % of
a transcript (median ~6.2k tokens): right for the paper configs, too long for a 2-core CPU demo.
``ToolView(mode="compact", others=k)`` shows each example's gold tools plus ``k`` others drawn from
its visible list (deterministically per example id), in their original order so position does not
give the answer away; ``compact_schemas`` also drops parameter descriptions and keeps the first
sentence of each tool description. The same view must be applied to SFT, GRPO and eval (the
launcher does, and states it in the run summary): a smaller view is an easier task, because the
visible tools hint at the answer. The reward's validity level 1 then checks names against the
reduced list, which is what the model saw.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import zlib
from collections.abc import Mapping
from typing import Any

from prove_jax.records import Example


@dataclasses.dataclass(frozen=True)
class ToolView:
    mode: str = "full"  # full | compact
    others: int = 2  # compact: non-gold tools kept per example
    compact_schemas: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in ("full", "compact"):
            raise ValueError(f"tool view mode must be full or compact, got {self.mode!r}")
        if self.others < 0:
            raise ValueError(f"others must be >= 0, got {self.others}")

    def describe(self) -> str:
        if self.mode == "full" and not self.compact_schemas:
            return "full tool lists"
        what = f"gold tools + {self.others} others" if self.mode == "compact" else "full tool lists"
        return what + (", compact schemas" if self.compact_schemas else "")


def gold_names(example: Example) -> set[str]:
    return {c.name for c in example.gold_calls()}


def _first_sentence(text: str) -> str:
    text = (text or "").strip()
    for i, ch in enumerate(text):
        if ch in ".;\n" and (i + 1 == len(text) or text[i + 1] in " \n"):
            return text[: i + 1].rstrip(";\n").strip()
    return text


def _compact_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _compact_schema(v) for k, v in schema.items() if k not in ("description", "title", "examples")}
    if isinstance(schema, list):
        return [_compact_schema(v) for v in schema]
    return schema


def compact_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One tool with a one-sentence description and parameter schemas without prose."""
    t = copy.deepcopy(dict(tool))
    fn = t.get("function", t)
    fn["description"] = _first_sentence(fn.get("description", ""))
    params = fn.get("parameters")
    if isinstance(params, dict):
        props = params.get("properties")
        if isinstance(props, dict):
            params["properties"] = {k: _compact_schema(v) for k, v in props.items()}
    return t


def apply_view(example: Example, view: ToolView) -> Example:
    """``example`` with ``tools`` following ``view`` (a new record; the given one is not modified)."""
    tools = list(example.tools)
    if view.mode == "compact":
        gold = gold_names(example)
        rest = [i for i, t in enumerate(tools) if t.get("function", t).get("name") not in gold]
        rng = random.Random(zlib.crc32(f"{view.seed}:{example.id}".encode()))
        keep = set(rng.sample(rest, min(view.others, len(rest))))
        tools = [t for i, t in enumerate(tools) if i in keep or t.get("function", t).get("name") in gold]
    if view.compact_schemas:
        tools = [compact_tool(t) for t in tools]
    return dataclasses.replace(example, tools=tuple(tools))
