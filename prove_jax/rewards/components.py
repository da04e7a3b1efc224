"""The reward components (prove_paper.md §3) as pure functions in a name-keyed registry.

Scoring is split in two so the expensive part runs once per rollout whatever the ablation:

1. :func:`analyse` walks the model calls once (validity levels, name hits, candidate lists) and
   runs the coverage alignment, producing an :class:`Episode` of counts;
2. each component is a tiny pure function ``(plan, episode, config) -> float`` registered under
   its name (Tunix ``function_registry`` style), so a config switches components by name and new
   terms can be registered without touching the scorer.

Exact rules (notation: Ĉ = model calls in order across turns, N = |Ĉ|, G = gold steps, n_gt =
gold calls with parallel calls counted individually):

* **R_val** (range [0, 1]): each call scores 1/3 per level reached, cumulatively, stopping at the
  first failed level: (1) its name is one of the example's *visible* tools; (2) its arguments are
  a dict (not malformed JSON — a call with ``parsed_ok: False`` fails here too) with every
  required parameter present and JSON-compatible types (rules in :mod:`.schema`); (3) its
  ``executed_ok`` is true. Averaged over all N calls; N = 0 → 0.
* **Alignment** (shared by R_cov and R_arg): a model call matches a gold call when the names are
  equal and the model's arguments contain *all* of the gold call's keys (key-set matching; extra
  keys allowed). One-to-one: gold calls are taken in step order, parallel calls matched
  individually; each picks, among the still unused matching model calls, the one agreeing on the
  most argument values (JSON equality: ``1 == 1.0`` but ``True != 1``), ties → earliest position.
  Within a step of parallel calls the most agreeing (gold, model) pair is fixed first (ties →
  earlier gold call, then earliest position), so parallel calls that differ only in values are
  never cross-paired (see :func:`_align`). A call with non-dict arguments never matches.
* **R_cov** (Eq. 1, range [0, 1]): (1/|G|) Σ_g m(g)·o(g). A step is matched (m = 1) when all its
  calls are aligned. o(g) = Π over prerequisites j of 1[µ(j) < µ(g)] with µ(j) the *last*
  position of j's calls and µ(g) the *first* position of g's calls; an unmatched prerequisite
  makes o(g) = 0. |G| = 0 → 0 (never used: that is an abstention example).
* **R_eff** (Eq. 2, range [-alpha·max(0, N-B)/B, 0], i.e. (-inf, 0]): -alpha·max(0, N - B)/B with
  B = n_gt + ceil(beta·n_gt); only the calls beyond the budget cost anything. B = 0 → 0.
* **R_name** (Eq. 3, range [0, 1]): fraction of model calls whose name is a gold name; N = 0 → 0.
* **R_arg** (Eq. 4, range [0, 1]): mean over aligned pairs of (agreeing gold keys)/(gold keys);
  a gold call without arguments contributes 1; no aligned pair → 0.
* **abstain** (range {0, 1}): for G = ∅, 1 if N = 0 else 0 — and then it *is* the total.
* **state** (ours, off by default, range [0, 1]): final-state agreement, see :mod:`.state`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prove_jax.records import CallRecord
from prove_jax.rewards.config import RewardConfig
from prove_jax.rewards.plan import CMP_IDENT, CMP_NUM, CMP_STR, ExamplePlan, GoldCall
from prove_jax.rewards.schema import json_eq
from prove_jax.rewards.state import state_agreement


class Episode:
    """Counts from one pass over a rollout's calls (what every component is computed from).

    Attributes:
        n_calls: N. val_levels: Σ levels reached (0..3 per call). name_hits: calls with a gold
        name. matched_pos: per gold call, the aligned model position or -1. n_pairs: |M|.
        arg_sum: Σ over aligned pairs of the agreeing fraction. cov_hits: Σ_g m(g)·o(g).
        final_state / gold_final_state: the optional snapshots for the ``state`` term.
    """

    __slots__ = ("arg_sum", "cov_hits", "final_state", "gold_final_state", "matched_pos", "n_calls",
                 "n_pairs", "name_hits", "val_levels")

    def __init__(self) -> None:
        self.n_calls = 0
        self.val_levels = 0
        self.name_hits = 0
        self.matched_pos: list[int] = []
        self.n_pairs = 0
        self.arg_sum = 0.0
        self.cov_hits = 0
        self.final_state: Mapping[str, Any] | None = None
        self.gold_final_state: Mapping[str, Any] | None = None


def analyse(plan: ExamplePlan, calls: Sequence[Any]) -> Episode:
    """One pass over ``calls``: validity levels, name hits, alignment and coverage counts.

    A call is a :class:`prove_jax.records.CallRecord` (what episodes record) or a dict with the
    same keys. Never raises on malformed calls: a call of another type or a non-string name
    reaches no level and matches nothing; non-dict arguments stop at level 1 and never match.
    """
    ep = Episode()
    n = len(calls)
    ep.n_calls = n
    tools = plan.tools
    gold_names = plan.gold_names
    levels = 0
    name_hits = 0
    cands: dict[str, list[int]] = {}
    cand_args: dict[int, dict[str, Any]] = {}  # arguments of the candidate positions (for the alignment)
    for pos, call in enumerate(calls):
        cls = call.__class__
        if cls is CallRecord:
            name, args, parsed = call.name, call.arguments, call.parsed_ok
        elif cls is dict or isinstance(call, dict):
            name, args, parsed = call.get("name"), call.get("arguments"), call.get("parsed_ok")
        else:
            continue
        if name.__class__ is not str:
            continue
        good = (args.__class__ is dict or isinstance(args, dict)) and parsed is not False
        if name in gold_names:
            name_hits += 1
            if good:
                cand_args[pos] = args
                lst = cands.get(name)
                if lst is None:
                    cands[name] = [pos]
                else:
                    lst.append(pos)
        spec = tools.get(name)
        if spec is not None:
            if good and spec.accepts(args):  # type: ignore[arg-type]  # good ⇒ args is a dict
                done = call.executed_ok if cls is CallRecord else call.get("executed_ok")
                levels += 3 if done else 2
            else:
                levels += 1
    ep.val_levels = levels
    ep.name_hits = name_hits
    if plan.n_gt:
        _align(plan, cand_args, cands, ep)
    return ep


def _agreement(g: GoldCall, args: Mapping[str, Any]) -> int:
    """Number of g's argument values the model's ``args`` (which has all of g's keys) equals."""
    agree = 0
    for key, value, kind in g.items:
        a = args[key]
        if kind == CMP_STR:
            if a == value:
                agree += 1
        elif kind == CMP_IDENT:
            if a is value:
                agree += 1
        elif kind == CMP_NUM:
            if a == value and a.__class__ is not bool:
                agree += 1
        elif json_eq(a, value):
            agree += 1
    return agree


def _align(plan: ExamplePlan, args_at: Mapping[int, Mapping[str, Any]], cands: dict[str, list[int]],
           ep: Episode) -> None:
    """One-to-one alignment in gold step order, then the R_cov step/order counts.

    A single-call step takes the unused candidate (same name, all gold keys) agreeing on the most
    values, ties → earliest position — the paper's rule verbatim. A step with parallel calls
    assigns its calls best pair first: the (gold call, candidate) pair with the most agreeing
    values, ties → the earlier gold call in listing order, then the earliest position; repeated
    until no pair is left. Taking the step's gold calls one by one instead could hand a 0-agreement
    tie to the first gold call and steal the exact match of its sibling, breaking the paper's
    guarantee that parallel calls differing only in values are never cross-paired; for a lone
    call both procedures coincide.
    """
    matched = [-1] * plan.n_gt
    pairs = 0
    arg_sum = 0.0
    gold_calls = plan.gold_calls
    if cands:
        for step in plan.steps:
            if len(step) == 1:
                g = gold_calls[step[0]]
                lst = cands.get(g.name)  # type: ignore[arg-type]
                if not lst:
                    continue
                keys = g.keys
                n_args = g.n_args
                best = -1
                best_agree = -1
                for pos in lst:
                    args = args_at[pos]
                    if keys and not args.keys() >= keys:
                        continue
                    agree = _agreement(g, args) if n_args else 0
                    if agree > best_agree:
                        best = pos
                        best_agree = agree
                        if agree == n_args:
                            break  # cannot be beaten, and later positions lose ties anyway
                if best >= 0:
                    lst.remove(best)  # one-to-one: a model call serves one gold call
                    matched[g.index] = best
                    pairs += 1
                    arg_sum += best_agree / n_args if n_args else 1.0
                continue
            options: list[tuple[int, int, int, int]] = []
            for order, gi in enumerate(step):
                g = gold_calls[gi]
                lst = cands.get(g.name)  # type: ignore[arg-type]
                if not lst:
                    continue
                keys = g.keys
                for pos in lst:
                    args = args_at[pos]
                    if keys and not args.keys() >= keys:
                        continue
                    options.append((-_agreement(g, args), order, pos, gi))
            if not options:
                continue
            options.sort()  # (most agreeing, earlier gold call, earliest position); all keys unique
            taken: set[int] = set()
            for neg_agree, _, pos, gi in options:
                if matched[gi] >= 0 or pos in taken:
                    continue
                g = gold_calls[gi]
                taken.add(pos)
                cands[g.name].remove(pos)  # type: ignore[index]
                matched[g.index] = pos
                pairs += 1
                arg_sum += -neg_agree / g.n_args if g.n_args else 1.0
    ep.matched_pos = matched
    ep.n_pairs = pairs
    ep.arg_sum = arg_sum
    if not pairs:
        return
    n_steps = plan.n_steps
    first = [-1] * n_steps
    last = [-1] * n_steps
    for s, idx in enumerate(plan.steps):
        lo = hi = matched[idx[0]]
        if lo < 0:
            continue
        for i in idx[1:]:
            p = matched[i]
            if p < 0:
                lo = -1
                break
            if p < lo:
                lo = p
            elif p > hi:
                hi = p
        if lo >= 0:
            first[s] = lo
            last[s] = hi
    hits = 0
    for s, pre in enumerate(plan.deps):
        mu = first[s]
        if mu < 0:
            continue
        for j in pre:
            lj = last[j]
            if lj < 0 or lj >= mu:
                break
        else:
            hits += 1
    ep.cov_hits = hits


def budget(n_gt: int, beta: float) -> int:
    """B = n_gt + ceil(beta * n_gt). A 1e-9 slack keeps e.g. 0.1 * 30 = 3.0000000000000004 at 3."""
    return n_gt + math.ceil(beta * n_gt - 1e-9)


# --------------------------------------------------------------------------- components

ComponentFn = Callable[[ExamplePlan, Episode, RewardConfig], float]


def r_val(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """R_val: mean over calls of (levels reached)/3; N = 0 → 0."""
    return ep.val_levels / (3 * ep.n_calls) if ep.n_calls else 0.0


def r_cov(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """R_cov (Eq. 1): fraction of gold steps matched in dependency order; |G| = 0 → 0."""
    return ep.cov_hits / plan.n_steps if plan.n_steps else 0.0


def r_eff(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """R_eff (Eq. 2): -alpha * max(0, N - B) / B; B = 0 (abstention) → 0."""
    b = budget(plan.n_gt, cfg.beta)
    excess = ep.n_calls - b
    return -cfg.alpha * excess / b if excess > 0 and b > 0 else 0.0


def r_name(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """R_name (Eq. 3): fraction of model calls with a gold name; N = 0 → 0."""
    return ep.name_hits / ep.n_calls if ep.n_calls else 0.0


def r_arg(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """R_arg (Eq. 4): mean agreeing-value fraction over aligned pairs; no pair → 0."""
    return ep.arg_sum / ep.n_pairs if ep.n_pairs else 0.0


def r_abstain(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """Abstention rule: 1 if the model made no call, else 0 (meaningful only when G = ∅)."""
    return 1.0 if ep.n_calls == 0 else 0.0


def r_state(plan: ExamplePlan, ep: Episode, cfg: RewardConfig) -> float:
    """Final-state agreement (ours); 0 when either snapshot is missing. See :mod:`.state`."""
    return state_agreement(ep.final_state, ep.gold_final_state)


class ComponentRegistry:
    """Name → pure component function. Register with ``@registry.register("name")``."""

    def __init__(self) -> None:
        self._fns: dict[str, ComponentFn] = {}

    def register(self, name: str, fn: ComponentFn | None = None, *, override: bool = False) -> Any:
        """Register ``fn`` under ``name`` (usable as a decorator). Re-registering needs ``override``."""

        def _add(f: ComponentFn) -> ComponentFn:
            if name in self._fns and not override:
                raise ValueError(f"reward component {name!r} is already registered")
            self._fns[name] = f
            return f

        return _add(fn) if fn is not None else _add

    def get(self, name: str) -> ComponentFn:
        """The function registered as ``name`` (``KeyError`` listing the known names)."""
        try:
            return self._fns[name]
        except KeyError:
            raise KeyError(f"unknown reward component {name!r}; registered: {sorted(self._fns)}") from None

    def unregister(self, name: str) -> None:
        """Remove a component (for tests and experiments that register temporary terms)."""
        self._fns.pop(name, None)

    def names(self) -> tuple[str, ...]:
        """Registered names in registration order."""
        return tuple(self._fns)

    def __contains__(self, name: object) -> bool:
        return name in self._fns


#: The global registry the scorer resolves ``RewardConfig.components`` against.
REGISTRY = ComponentRegistry()
for _name, _fn in (("val", r_val), ("cov", r_cov), ("eff", r_eff), ("name", r_name), ("arg", r_arg),
                   ("abstain", r_abstain), ("state", r_state)):
    REGISTRY.register(_name, _fn)
register_component = REGISTRY.register
