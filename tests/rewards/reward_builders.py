"""Small builders for Example records and rollout calls used by the reward tests."""

from __future__ import annotations

from typing import Any

from prove_jax.records import CallRecord


def tool(name: str, props: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    """An OpenAI-style tool entry with a JSON-schema ``parameters`` object."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"test tool {name}",
            "parameters": {"type": "object", "properties": props or {}, "required": required or []},
        },
    }


#: A small visible tool set: search(query, limit?), get(id), pay(account, amount, note?), ping().
TOOLS = [
    tool("search", {"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"]),
    tool("get", {"id": {"type": "string"}}, ["id"]),
    tool("pay", {"account": {"type": "string"}, "amount": {"type": "number"},
                 "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, ["account", "amount"]),
    tool("ping"),
]


def gcall(name: str, **arguments: Any) -> dict[str, Any]:
    """A gold call ``{name, arguments}``."""
    return {"name": name, "arguments": arguments}


def step(sid: int, calls: list[dict[str, Any]], depends_on: list[int] | None = None) -> dict[str, Any]:
    """A gold step."""
    return {"step": sid, "calls": calls, "depends_on": depends_on or []}


def example(turns_gold: list[list[dict[str, Any]]], tools: list[dict[str, Any]] | None = None,
            kind: str = "conversation", ex_id: str = "t") -> dict[str, Any]:
    """An Example record (the dict of Contract 2) whose turn ``i`` has gold steps ``turns_gold[i]``."""
    return {
        "id": ex_id,
        "kind": kind,
        "servers": ["test"],
        "seed": 0,
        "tools": TOOLS if tools is None else tools,
        "system": "",
        "turns": [{"user": f"u{i}", "gold": g, "reply": ""} for i, g in enumerate(turns_gold)],
        "complexity": {"n_calls": sum(len(s["calls"]) for g in turns_gold for s in g),
                       "n_steps": sum(len(g) for g in turns_gold), "n_turns": len(turns_gold), "n_servers": 1},
    }


def call(name: Any, arguments: Any = None, executed_ok: bool = True, **extra: Any) -> dict[str, Any]:
    """A rollout call as the env records it."""
    return {"name": name, "arguments": {} if arguments is None else arguments, "executed_ok": executed_ok,
            "parsed_ok": True, **extra}


def as_record(c: dict[str, Any], turn: int = 0) -> CallRecord:
    """The episode driver's typed form of a dict call (the same fields; defaults where it has none)."""
    return CallRecord(name=c.get("name"), arguments=c.get("arguments"), parsed_ok=c.get("parsed_ok") is not False,
                      schema_ok=bool(c.get("schema_ok", True)), turn=turn, assistant_turn=turn,
                      executed_ok=bool(c.get("executed_ok")), result=str(c.get("result", "")),
                      error_kind=c.get("error_kind"))


def gold_as_calls(ex: dict[str, Any]) -> list[dict[str, Any]]:
    """The gold trajectory replayed as rollout calls (listing order, all executed)."""
    return [call(c["name"], dict(c["arguments"])) for t in ex["turns"] for s in t["gold"] for c in s["calls"]]
