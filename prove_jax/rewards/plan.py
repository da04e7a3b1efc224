"""Per-example precomputation, done once and shared by every rollout of a GRPO group.

Scoring a rollout needs the example's visible-tool schemas (R_val), its gold calls in step
order with their argument keys/values (R_cov, R_arg alignment), the step → calls and step →
prerequisites tables (R_cov order term), the gold name set (R_name) and n_gt (R_eff). Building
these from the Example record costs far more than scoring one rollout, so :func:`prepare` builds
an :class:`ExamplePlan` once and caches it by object identity.

How the Example record is read (Contract 2), including the edge cases the paper leaves open:

* tools: OpenAI style ``{"type": "function", "function": {name, description, parameters}}``; a
  flat ``{name, parameters|inputSchema}`` (MCP style) is accepted too. A missing/invalid schema
  means "any argument dict passes level 2". Duplicate names: the first one wins.
* gold steps: ``turns[*].gold`` entries ``{step, calls: [{name, arguments}], depends_on}``; steps
  are global across turns. "Step order" is ascending ``step`` id (stable, so ties keep listing
  order); if some id is not an int, listing order is used. Entries sharing a step id are merged
  (their calls are parallel calls of one step). A step with no calls is dropped (it can be neither
  matched nor failed); dependencies on dropped or unknown step ids, and self-dependencies, are
  ignored.
* a gold call whose ``arguments`` is not a dict has no arguments (contributes 1 to R_arg when
  aligned); one without a string name can never be matched but still counts in n_gt.
* a typed :class:`prove_jax.records.Example` is read the same way (its fields were checked when
  it was made, so none of the leniency above is needed for it).
* abstention: an example with no gold call (G = ∅) — e.g. kind "abstention" / "irrelevance", but
  decided by the gold, not by ``kind`` — is scored by the abstention rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prove_jax.records import Example
from prove_jax.rewards.schema import ACCEPT_ANY, ToolSpec, compile_tool_schema

NoneType = type(None)

# How a gold argument value is compared with the model's value (see ``GoldCall.items``):
CMP_STR = 0  # str: Python == is exactly JSON equality
CMP_IDENT = 1  # bool / None: identity (True is not 1)
CMP_NUM = 2  # int / float: == by value, but the model value must not be a bool
CMP_JSON = 3  # containers and anything else: full json_eq


def _cmp_kind(value: Any) -> int:
    cls = value.__class__
    if cls is str:
        return CMP_STR
    if cls is bool or cls is NoneType:
        return CMP_IDENT
    if cls is int or cls is float:
        return CMP_NUM
    return CMP_JSON


class GoldCall:
    """One gold call, ready for alignment.

    ``items`` holds ``(key, value, cmp_kind)`` triples; ``keys`` is the key set a model call must
    contain to match (key-set matching); ``n_args`` is ``len(items)``.
    """

    __slots__ = ("index", "items", "keys", "n_args", "name", "step")

    def __init__(self, index: int, step: int, name: str | None, arguments: Mapping[str, Any]) -> None:
        self.index = index
        self.step = step
        self.name = name
        self.items: tuple[tuple[str, Any, int], ...] = tuple(
            (str(k), v, _cmp_kind(v)) for k, v in arguments.items()
        )
        self.keys = frozenset(k for k, _, _ in self.items)
        self.n_args = len(self.items)


class ExamplePlan:
    """Everything about one example that scoring needs, precomputed (immutable by convention).

    Attributes:
        example_id / kind: copied from the record (informational).
        tools: visible tool name → compiled schema (``ACCEPT_ANY`` when it has none).
        gold_calls: flat gold calls in step order (parallel calls individually).
        steps: per step (in step order) the indices into ``gold_calls`` of its calls.
        deps: per step the indices of its prerequisite steps.
        gold_names: names of all gold calls (R_name's GT_names).
        n_gt: number of gold calls; n_steps: |G|; is_abstention: ``n_gt == 0``.
    """

    __slots__ = ("deps", "example_id", "gold_calls", "gold_names", "is_abstention", "kind", "n_gt",
                 "n_steps", "steps", "tools")

    def __init__(self, example: Example | Mapping[str, Any]) -> None:
        if isinstance(example, Example):
            self.example_id, self.kind = example.id, example.kind
            self.tools = _index_tools(example.tools)
            raw = [(s.step, [(c.name, c.arguments) for c in s.calls], list(s.depends_on))
                   for t in example.turns for s in t.gold]
        elif isinstance(example, Mapping):
            self.example_id = str(example.get("id", ""))
            self.kind = str(example.get("kind", ""))
            self.tools = _index_tools(example.get("tools"))
            raw = _raw_steps(example.get("turns"))
        else:
            raise TypeError(f"an Example record must be an Example or a mapping, got {type(example).__name__}")
        self.gold_calls, self.steps, self.deps = _gold_tables(raw)
        self.gold_names = frozenset(g.name for g in self.gold_calls if g.name is not None)
        self.n_gt = len(self.gold_calls)
        self.n_steps = len(self.steps)
        self.is_abstention = self.n_gt == 0

    def __repr__(self) -> str:
        return (f"ExamplePlan(id={self.example_id!r}, kind={self.kind!r}, tools={len(self.tools)}, "
                f"n_gt={self.n_gt}, n_steps={self.n_steps})")


def _index_tools(tools: Any) -> dict[str, ToolSpec]:
    index: dict[str, ToolSpec] = {}
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        return index
    for entry in tools:
        if not isinstance(entry, Mapping):
            continue
        fn = entry.get("function")
        fn = fn if isinstance(fn, Mapping) else entry
        name = fn.get("name")
        if not isinstance(name, str) or name in index:
            continue
        params = fn.get("parameters", fn.get("inputSchema", fn.get("input_schema")))
        index[name] = compile_tool_schema(params) or ACCEPT_ANY
    return index


_RawStep = tuple[Any, list[tuple[Any, Any]], list[Any]]
"""(step id, [(name, arguments)], depends_on) of one gold step entry, in listing order."""


def _raw_steps(turns: Any) -> list[_RawStep]:
    """The gold step entries of a dict record's ``turns``, leniently (malformed parts skipped)."""
    raw: list[_RawStep] = []
    if isinstance(turns, Sequence) and not isinstance(turns, str):
        for turn in turns:
            gold = turn.get("gold") if isinstance(turn, Mapping) else None
            if not isinstance(gold, Sequence) or isinstance(gold, str):
                continue
            for step in gold:
                if not isinstance(step, Mapping):
                    continue
                calls = step.get("calls")
                deps = step.get("depends_on")
                raw.append((
                    step.get("step", f"#{len(raw)}"),
                    [(c.get("name"), c.get("arguments")) for c in calls if isinstance(c, Mapping)]
                    if isinstance(calls, Sequence) else [],
                    list(deps) if isinstance(deps, Sequence) and not isinstance(deps, str) else [],
                ))
    return raw


def _gold_tables(
    raw: list[_RawStep],
) -> tuple[tuple[GoldCall, ...], tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Gold step entries into (gold_calls, steps, deps) in step order."""
    # Merge entries that share a step id (parallel calls split over entries), keep first position.
    merged: dict[Any, tuple[list[tuple[Any, Any]], list[Any]]] = {}
    for sid, calls, deps in raw:
        key = sid if isinstance(sid, int | str) and not isinstance(sid, bool) else f"#{id(calls)}"
        if key in merged:
            merged[key][0].extend(calls)
            merged[key][1].extend(deps)
        else:
            merged[key] = (list(calls), list(deps))
    order = list(merged)
    if all(isinstance(k, int) for k in order):
        order.sort()  # stable; ties impossible after merging
    order = [k for k in order if merged[k][0]]  # drop steps without calls
    position = {k: i for i, k in enumerate(order)}

    gold_calls: list[GoldCall] = []
    steps: list[tuple[int, ...]] = []
    deps_out: list[tuple[int, ...]] = []
    for s, key in enumerate(order):
        calls, deps = merged[key]
        idx: list[int] = []
        for name, args in calls:
            gc = GoldCall(len(gold_calls), s, name if isinstance(name, str) else None,
                          args if isinstance(args, Mapping) else {})
            idx.append(gc.index)
            gold_calls.append(gc)
        steps.append(tuple(idx))
        pre = []
        for d in deps:
            j = position.get(d) if isinstance(d, int | str) and not isinstance(d, bool) else None
            if j is not None and j != s and j not in pre:
                pre.append(j)
        deps_out.append(tuple(pre))
    return tuple(gold_calls), tuple(steps), tuple(deps_out)


# --------------------------------------------------------------------------- identity cache

_CACHE: dict[int, tuple[Example | Mapping[str, Any], ExamplePlan]] = {}
_CACHE_MAX = 4096


def prepare(example: Example | Mapping[str, Any] | ExamplePlan, *, cache: bool = True) -> ExamplePlan:
    """The :class:`ExamplePlan` of ``example``, cached by object identity.

    Identity (not the ``id`` field) is the key because two different records may share an id
    (tests, re-synthesised datasets) and hashing the content would cost as much as rebuilding.
    The cache holds a reference to the record, so its ``id()`` cannot be recycled while cached;
    records are treated as immutable — after mutating one, pass ``cache=False`` or call
    :func:`clear_cache`. The cache is bounded (oldest entries evicted first).
    """
    if isinstance(example, ExamplePlan):
        return example
    if not cache:
        return ExamplePlan(example)
    key = id(example)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is example:
        return hit[1]
    plan = ExamplePlan(example)
    if len(_CACHE) >= _CACHE_MAX:
        for old in list(_CACHE)[: _CACHE_MAX // 4]:
            _CACHE.pop(old, None)
    _CACHE[key] = (example, plan)
    return plan


def clear_cache() -> None:
    """Forget every cached plan (e.g. after mutating Example records in place)."""
    _CACHE.clear()
