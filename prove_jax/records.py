"""The Example and Rollout records (DESIGN Contracts 2 and 3) as typed dataclasses: one definition
that data/, the episode driver, the trainer, the eval and the reward all read.

Why typed: both records used to be plain dicts read by string key in a dozen modules, so a
renamed or missing key surfaced as a ``KeyError`` (or a silent ``None`` from ``.get``) far from
where the record was made. Here a record is checked once, where it enters — an Example when
``data/`` writes it and when a loader reads it (:meth:`Example.from_dict`), a Rollout when the
driver builds it — and everything downstream reads attributes.

File format: :meth:`Example.to_dict` gives back exactly the JSON object :meth:`Example.from_dict`
was given, key order included, so a record written through it is byte-identical to the dict
``data/`` builds: known keys come out in the order ``data/`` writes them (the Contract's order)
and keys this module does not know (``meta``, or fields a later ``data/`` adds) are kept in
``extras`` and written after them, at every level (record, turn, gold step, gold call,
complexity). A Rollout has no dict form (its token arrays are never written); its calls and parse
errors do (:meth:`CallRecord.to_dict` / :meth:`CallRecord.from_dict`, the same for
:class:`ParseError`), since GRPO's rollout dump (``prove_jax.rl.dump``) writes and reads them back.

Sequences are tuples (a record is not edited after it is made; a different view of an example
is a new record, ``dataclasses.replace``); tool schemas and call arguments stay the JSON objects
they are. This module imports only the standard library and numpy: the pure reward package and
``data/`` import it, and nothing here pulls in JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

import numpy as np

__all__ = [
    "KINDS",
    "NO_CALL_KINDS",
    "TOOL_KINDS",
    "CallRecord",
    "Complexity",
    "Example",
    "GoldCall",
    "GoldStep",
    "ParseError",
    "Rollout",
    "Turn",
]

TOOL_KINDS: tuple[str, ...] = ("conversation", "clarification")
"""Example kinds whose gold makes calls."""
NO_CALL_KINDS: tuple[str, ...] = ("abstention", "irrelevance")
"""Example kinds answered without a call (the model must refuse or ask)."""
KINDS: tuple[str, ...] = (*TOOL_KINDS, *NO_CALL_KINDS)
"""Every ``Example.kind`` (Contract 2)."""


# ---- reading a JSON object, naming the record and the field in every error -------------------------------
class _Reader:
    """Checks one record's fields; every error names the record (``Example 'prove-0-conv-000003'``)
    and the field's path (``turns[1].gold[0].calls[0].name``), so a bad line of a dataset is found
    without a debugger."""

    def __init__(self, record: str) -> None:
        self.record = record

    def fail(self, path: str, problem: str) -> NoReturn:
        raise ValueError(f"{self.record}: field {path!r} {problem}")

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(path, f"must be a JSON object, got {type(value).__name__}")
        return value

    def get(self, d: Mapping[str, Any], key: str, kind: type, path: str) -> Any:
        where = f"{path}.{key}" if path else key
        if key not in d:
            raise ValueError(f"{self.record}: missing required field {where!r}")
        value = d[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):  # JSON true is no int
            self.fail(where, f"must be {kind.__name__}, got {type(value).__name__}")
        return value

    def list_of(self, d: Mapping[str, Any], key: str, item: type, path: str) -> list[Any]:
        where = f"{path}.{key}" if path else key
        values = self.get(d, key, list, path)
        for i, v in enumerate(values):
            if not isinstance(v, item) or (isinstance(v, bool) and item is int):
                self.fail(f"{where}[{i}]", f"must be {item.__name__}, got {type(v).__name__}")
        return values


def _extras(d: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in known}


# ---- Contract 2: the Example -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class GoldCall:
    """One gold call. ``expect_error``: a designed failure (the server refuses it on purpose and the
    gold recovers); ``None`` when the record does not say (written back only when it did)."""

    name: str
    arguments: dict[str, Any]
    expect_error: bool | None = None
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)

    _KEYS = ("name", "arguments", "expect_error")

    @classmethod
    def read(cls, d: Any, r: _Reader, path: str) -> GoldCall:
        d = r.obj(d, path)
        expect = r.get(d, "expect_error", bool, path) if "expect_error" in d else None
        return cls(r.get(d, "name", str, path), r.get(d, "arguments", dict, path), expect, _extras(d, cls._KEYS))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.expect_error is not None:
            out["expect_error"] = self.expect_error
        out.update(self.extras)
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class GoldStep:
    """One gold step: its calls are parallel (one assistant turn); ``step`` ids are global across
    turns and ``depends_on`` names the steps whose results it needs."""

    step: int
    calls: tuple[GoldCall, ...]
    depends_on: tuple[int, ...]
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)

    _KEYS = ("step", "calls", "depends_on")

    @classmethod
    def read(cls, d: Any, r: _Reader, path: str) -> GoldStep:
        d = r.obj(d, path)
        calls = tuple(GoldCall.read(c, r, f"{path}.calls[{i}]") for i, c in enumerate(r.get(d, "calls", list, path)))
        return cls(r.get(d, "step", int, path), calls, tuple(r.list_of(d, "depends_on", int, path)),
                   _extras(d, cls._KEYS))

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "calls": [c.to_dict() for c in self.calls], "depends_on": list(self.depends_on),
                **self.extras}


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One user turn, the gold steps that answer it, and the reply that closes it."""

    user: str
    gold: tuple[GoldStep, ...]
    reply: str
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)

    _KEYS = ("user", "gold", "reply")

    @classmethod
    def read(cls, d: Any, r: _Reader, path: str) -> Turn:
        d = r.obj(d, path)
        gold = tuple(GoldStep.read(s, r, f"{path}.gold[{i}]") for i, s in enumerate(r.get(d, "gold", list, path)))
        return cls(r.get(d, "user", str, path), gold, r.get(d, "reply", str, path), _extras(d, cls._KEYS))

    def to_dict(self) -> dict[str, Any]:
        return {"user": self.user, "gold": [s.to_dict() for s in self.gold], "reply": self.reply, **self.extras}


@dataclasses.dataclass(frozen=True, slots=True)
class Complexity:
    """What the example asks for, counted by ``data/`` (the card's histograms read it)."""

    n_calls: int
    n_steps: int
    n_turns: int
    n_servers: int
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)

    _KEYS = ("n_calls", "n_steps", "n_turns", "n_servers")

    @classmethod
    def read(cls, d: Any, r: _Reader, path: str) -> Complexity:
        d = r.obj(d, path)
        return cls(*(r.get(d, k, int, path) for k in cls._KEYS), extras=_extras(d, cls._KEYS))

    def to_dict(self) -> dict[str, Any]:
        return {"n_calls": self.n_calls, "n_steps": self.n_steps, "n_turns": self.n_turns,
                "n_servers": self.n_servers, **self.extras}


@dataclasses.dataclass(frozen=True, slots=True)
class Example:
    """One synthesized task (Contract 2): the servers and seed an episode opens, the tools the model
    sees, the scripted user turns with their gold steps. ``extras`` holds the record's other keys
    (``data/`` writes ``meta``: provenance, knobs, outcomes), which no consumer of the record reads."""

    id: str
    kind: str
    servers: tuple[str, ...]
    seed: int
    tools: tuple[dict[str, Any], ...]
    system: str
    turns: tuple[Turn, ...]
    complexity: Complexity
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)

    _KEYS = ("id", "kind", "servers", "seed", "tools", "system", "turns", "complexity")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Example:
        """The typed record of one JSON object; ``ValueError`` naming the field and the example's id
        when a required field is missing or of the wrong type."""
        ident = d.get("id") if isinstance(d, Mapping) else None
        r = _Reader(f"Example {ident!r}" if isinstance(ident, str) else "Example (no id)")
        d = r.obj(d, "<record>")
        ident = r.get(d, "id", str, "")
        kind = r.get(d, "kind", str, "")
        if kind not in KINDS:
            r.fail("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
        turns = r.get(d, "turns", list, "")
        if not turns:
            r.fail("turns", "must hold at least one turn (the opening user message)")
        return cls(
            id=ident,
            kind=kind,
            servers=tuple(r.list_of(d, "servers", str, "")),
            seed=r.get(d, "seed", int, ""),
            tools=tuple(r.list_of(d, "tools", dict, "")),
            system=r.get(d, "system", str, ""),
            turns=tuple(Turn.read(t, r, f"turns[{i}]") for i, t in enumerate(turns)),
            complexity=Complexity.read(r.get(d, "complexity", dict, ""), r, "complexity"),
            extras=_extras(d, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this record (``to_dict(from_dict(d)) == d``, key order included)."""
        return {"id": self.id, "kind": self.kind, "servers": list(self.servers), "seed": self.seed,
                "tools": list(self.tools), "system": self.system, "turns": [t.to_dict() for t in self.turns],
                "complexity": self.complexity.to_dict(), **self.extras}

    def gold_calls(self) -> Iterator[GoldCall]:
        """Every gold call, turn by turn and step by step as listed."""
        return (c for t in self.turns for s in t.gold for c in s.calls)

    @property
    def n_gold_calls(self) -> int:
        """n_gt: gold calls with parallel ones counted individually (the efficiency budget's base)."""
        return sum(len(s.calls) for t in self.turns for s in t.gold)


# ---- Contract 3: the Rollout -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class CallRecord:
    """One parsed call of an episode and what became of it.

    ``turn`` is the index of the user turn it answers (gold steps are grouped by user turn),
    ``assistant_turn`` the assistant turn that made it. ``schema_ok``: its arguments validate
    against the visible tool's schema; ``executed_ok``: the server ran it without an error
    (``error_kind`` says why not: ``unknown_tool`` for a name the model was not shown, which never
    reaches a server, else the pool's kind). ``result`` is the server's whole text (the model saw
    it clipped to ``EpisodeConfig.max_result_chars``). ``parsed_ok`` is always true for the
    driver's calls (a malformed block is a :class:`ParseError`, not a call); the reward reads it
    for calls that come from elsewhere."""

    name: str
    arguments: dict[str, Any]
    parsed_ok: bool
    schema_ok: bool
    turn: int
    assistant_turn: int
    executed_ok: bool
    result: str
    error_kind: str | None

    _KEYS = ("name", "arguments", "parsed_ok", "schema_ok", "turn", "assistant_turn", "executed_ok", "result",
             "error_kind")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this call (``from_dict(c.to_dict()) == c``)."""
        return {k: getattr(self, k) for k in self._KEYS}

    @classmethod
    def from_dict(cls, d: Any, record: str = "CallRecord", path: str = "") -> CallRecord:
        """The call of a JSON object; ``ValueError`` naming ``record`` and the field when one is
        missing or of the wrong type (a hand-edited or truncated dump fails where it is read)."""
        r = _Reader(record)
        d = r.obj(d, path or "<call>")
        kind = d.get("error_kind")
        if kind is not None and not isinstance(kind, str):
            r.fail(f"{path}.error_kind" if path else "error_kind", f"must be str or null, got {type(kind).__name__}")
        return cls(r.get(d, "name", str, path), r.get(d, "arguments", dict, path), r.get(d, "parsed_ok", bool, path),
                   r.get(d, "schema_ok", bool, path), r.get(d, "turn", int, path),
                   r.get(d, "assistant_turn", int, path), r.get(d, "executed_ok", bool, path),
                   r.get(d, "result", str, path), kind)


@dataclasses.dataclass(frozen=True, slots=True)
class ParseError:
    """A ``<tool_call>`` block that did not parse into a call (it is not executed or scored)."""

    turn: int
    assistant_turn: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "assistant_turn": self.assistant_turn, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: Any, record: str = "ParseError", path: str = "") -> ParseError:
        r = _Reader(record)
        d = r.obj(d, path or "<parse error>")
        return cls(r.get(d, "turn", int, path), r.get(d, "assistant_turn", int, path), r.get(d, "reason", str, path))


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Rollout:
    """One episode of one policy on one Example (Contract 3), as the episode driver returns it.

    The arrays are parallel over the transcript's ``T`` token ids, exactly the ids the policy saw
    and produced (never re-tokenized): ``loss_mask`` marks model-generated tokens, ``logprobs``
    are under the unmodified model and ``sample_logprobs`` under the distribution actually
    sampled from (both 0 off the mask). ``opening`` is the length of the opening render (system,
    tools, first user turn), shared by a GRPO group. ``kind`` and ``n_gold_calls`` come from the
    Example, so the trainer and eval need not look the record up. ``final_state`` is
    ``{server: snapshot}`` only when the episode was asked for snapshots. ``finish`` is one of
    ``done``, ``token_cap``, ``assistant_cap``, ``env_failed``; ``failed`` / ``failure`` say a
    server died or timed out. The reward is not part of the record: who asks decides which one
    (GRPO the run's, the eval the paper's), through ``prove_jax.rewards.score_rollouts``.
    Compared by identity (``eq=False``): arrays have no single truth value."""

    example_id: str
    group_id: str
    sample_idx: int
    kind: str
    n_gold_calls: int
    opening: int
    tokens: np.ndarray  # int32 [T]
    loss_mask: np.ndarray  # bool [T]
    logprobs: np.ndarray  # float32 [T]
    sample_logprobs: np.ndarray  # float32 [T]
    calls: tuple[CallRecord, ...]
    parse_errors: tuple[ParseError, ...]
    final_state: dict[str, Any] | None
    finish: str
    n_assistant_turns: int
    n_user_turns: int
    failed: bool
    failure: str | None = None

    def __post_init__(self) -> None:
        n = len(self.tokens)
        for name in ("loss_mask", "logprobs", "sample_logprobs"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"Rollout {self.example_id!r}: {name} has {len(getattr(self, name))} entries "
                                 f"for {n} tokens")

