"""The episode driver: multi-turn tool use of one policy against live MCP servers -> a Rollout.

An episode plays one Example record (DESIGN Contract 2): system prompt + visible tools + the
first user turn are rendered once; then the loop is

    policy writes an assistant turn -> parse <tool_call> blocks -> the pool executes the calls
    -> the results are appended as one tool turn -> the policy continues ...
    an answer without calls -> the next scripted user turn is appended (or the episode ends)

with caps on user turns, assistant turns and total tokens (:class:`EpisodeConfig`). The token
cap is a hard bound on what the driver appends: a tool-result turn, user turn or generation
prompt that would take the transcript past ``max_tokens`` is not appended (``finish ==
"token_cap"``), so a rollout fits the trainer's length buckets (only an opening render that is
itself longer than the cap can exceed it; the trainer drops such rows). A dead
server or a timeout marks the pool episode ``failed``; the driver then stops cleanly and still
returns the rollout (``finish == "env_failed"``), so one broken server never loses a batch.

An episode plays a typed :class:`prove_jax.records.Example` and returns the typed
:class:`prove_jax.records.Rollout` of DESIGN Contract 3 (its docstring lists the fields)::

    example_id, group_id, sample_idx
    kind, n_gold_calls                            from the Example: the trainer and eval need
                                                  them without the record at hand
    opening                                       tokens of the opening render (system + tools +
                                                  first user turn; shared by a GRPO group)
    tokens int32[T], loss_mask bool[T]           exactly the ids the policy saw and produced
    logprobs float32[T]                          log-probs under the unmodified model (0 off-mask)
    sample_logprobs float32[T]                   under the distribution actually sampled from
    calls (CallRecord: name, arguments, parsed_ok, schema_ok, turn, assistant_turn,
           executed_ok, result, error_kind)
    parse_errors (ParseError: turn, assistant_turn, reason)  malformed <tool_call> blocks
    final_state {server: snapshot} | None        only with ``EpisodeConfig.snapshots``
    finish, n_assistant_turns, n_user_turns, failed, failure

Design choices: the driver does not score. A rollout's reward depends on who asks — training
scores a group with the run's reward config (GDPO normalises across the group), the in-domain
eval with the paper's yardstick and the run's own — so both call
:func:`prove_jax.rewards.score_rollouts` on these records and no default-config reward is ever
computed only to be replaced. Snapshots of the servers' end state (``EpisodeConfig.snapshots``)
are off by default: they serialise every opened server's state, and only the reward's optional
``state`` term and the eval's final-state match read them, so those callers ask. ``turn`` is the
index of the *user* turn a call answers (gold steps are grouped by user turn);
``assistant_turn`` the index of the assistant turn that made it. A parsed call whose name is
not among the example's visible tools is recorded with ``executed_ok=False`` and never reaches
a server (the tool may exist there but was hidden from the model); the model gets an error
result for it. Calls of one turn run sequentially in order (state-changing calls must not race).

The policy is anything with ``async generate(context, *, max_new_tokens, stream)`` returning an
object with ``ids, logprobs, sample_logprobs, finish`` — the engine (:class:`EnginePolicy`) or a
script (:class:`ScriptedPolicy`, e.g. the gold calls), through the same driver path. This
module imports no JAX at import time, so ``prove_jax.env`` stays usable by host-only tools.
"""

from __future__ import annotations

import asyncio
import dataclasses
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import jsonschema
import numpy as np

from prove_jax.chat import ChatTemplate, ChatTokenizer, Transcript, parse_tool_calls
from prove_jax.env.pool import Episode, MCPPool
from prove_jax.records import CallRecord, Example, ParseError, Rollout

if TYPE_CHECKING:
    from prove_jax.engine import Engine, SamplingConfig, Session


class TurnResult(Protocol):
    """What a policy returns for one assistant turn (``prove_jax.engine.Generation`` fits)."""

    ids: list[int]
    logprobs: list[float]
    sample_logprobs: list[float]
    finish: str


class Policy(Protocol):
    async def generate(self, context: Sequence[int], *, max_new_tokens: int, stream: int) -> TurnResult: ...


@dataclasses.dataclass(frozen=True)
class EpisodeConfig:
    """Caps and switches of one episode.

    ``max_tokens`` bounds the whole transcript (context included; keep it <= the engine's
    ``max_len``): the driver never appends a turn that would exceed it. ``max_result_chars``
    truncates very long tool results (a full account list can be 30k characters) so one call
    cannot eat the token budget; ``None`` keeps them whole. ``snapshots`` records the servers'
    end state as ``final_state`` (else ``None``): the callers that read it ask for it (GRPO for
    the reward's ``state`` term, the in-domain eval for its final-state match).

    A run's config (the launch YAML's ``episode:`` section is this class) may set ``max_tokens:
    null``: start-up derives the cap from the train split's gold transcripts, the longest times
    ``length_margin``, bounded by ``max_tokens_limit`` (``prove_jax.rl.caps``; the driver itself
    only reads the resolved cap).
    """

    max_user_turns: int = 5
    max_assistant_turns: int = 10
    max_tokens: int | None = 2048
    max_result_chars: int | None = 2000
    length_margin: float = 1.25
    max_tokens_limit: int = 32768
    snapshots: bool = False


@dataclasses.dataclass
class ScriptedTurn:
    """A fixed assistant turn (for :class:`ScriptedPolicy`)."""

    ids: list[int]
    logprobs: list[float]
    sample_logprobs: list[float]
    finish: str = "stop"


class ScriptedPolicy:
    """Replays fixed assistant messages, tokenized exactly as the template writes them.

    :meth:`gold` builds the oracle for an Example: for every user turn, one assistant turn per
    gold step (parallel calls of a step share a turn) and then the turn's reply (no calls).
    After the script ends it answers ``"Done."`` forever, so it can never stall an episode.
    """

    def __init__(self, messages: Sequence[Mapping[str, Any]], template: ChatTemplate,
                 tokenizer: ChatTokenizer) -> None:
        self.template = template
        self.tokenizer = tokenizer
        self.messages = list(messages)
        self.next = 0

    @classmethod
    def gold(cls, example: Example, template: ChatTemplate, tokenizer: ChatTokenizer) -> ScriptedPolicy:
        msgs: list[dict[str, Any]] = []
        for turn in example.turns:
            for step in sorted(turn.gold, key=lambda s: s.step):
                calls = [{"name": c.name, "arguments": c.arguments} for c in step.calls]
                msgs.append({"role": "assistant", "content": "", "tool_calls": calls})
            msgs.append({"role": "assistant", "content": turn.reply or "Done."})
        return cls(msgs, template, tokenizer)

    async def generate(self, context: Sequence[int], *, max_new_tokens: int, stream: int) -> ScriptedTurn:
        msg = self.messages[self.next] if self.next < len(self.messages) else {"role": "assistant",
                                                                                "content": "Done."}
        self.next += 1
        ids = self.tokenizer.encode(self.template.assistant_body(msg))
        finish = "stop"
        if len(ids) > max_new_tokens:
            ids, finish = ids[:max_new_tokens], "length"
        zeros = [0.0] * len(ids)
        return ScriptedTurn(ids, zeros, list(zeros), finish)


class EnginePolicy:
    """An engine session as a :class:`Policy`: each turn samples with ``sampling``, capped by the
    driver's remaining token budget."""

    def __init__(self, session: Session, sampling: SamplingConfig) -> None:
        self.session = session
        self.sampling = sampling

    async def generate(self, context: Sequence[int], *, max_new_tokens: int, stream: int) -> TurnResult:
        sp = self.sampling
        if max_new_tokens < sp.max_new_tokens:
            sp = dataclasses.replace(sp, max_new_tokens=max_new_tokens)
        return await self.session.generate(context, sp, stream=stream)


def sample_seed(base_seed: int, example_id: str, sample_idx: int) -> int:
    """Stable 32-bit sampling seed of one rollout (independent of scheduling and process)."""
    return zlib.crc32(f"{base_seed}:{example_id}:{sample_idx}".encode()) & 0xFFFFFFFF


def opening_messages(example: Example) -> list[dict[str, str]]:
    """System (if any) and the first user turn."""
    msgs: list[dict[str, str]] = []
    if example.system:
        msgs.append({"role": "system", "content": example.system})
    msgs.append({"role": "user", "content": example.turns[0].user})
    return msgs


def _typed(example: Any) -> Example:
    if not isinstance(example, Example):
        raise TypeError(f"episodes play typed Example records, got {type(example).__name__} "
                        "(prove_jax.records.Example.from_dict reads a dict)")
    return example


class _Validators:
    """jsonschema validators of the example's visible tools (built once per episode)."""

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None:
        self.by_name: dict[str, Any] = {}
        for t in tools:
            fn = t.get("function", t)
            name = fn.get("name")
            if isinstance(name, str) and name not in self.by_name:
                schema = fn.get("parameters") or fn.get("inputSchema") or {"type": "object"}
                try:
                    self.by_name[name] = jsonschema.validators.validator_for(schema)(schema)
                except Exception:  # an uninterpretable schema judges nothing (lenient, like rewards)
                    self.by_name[name] = None

    def schema_ok(self, name: str, arguments: Any) -> bool:
        if name not in self.by_name:
            return False
        validator = self.by_name[name]
        if validator is None:
            return True
        try:
            return bool(validator.is_valid(arguments))
        except Exception:  # malformed schema discovered lazily: lenient
            return True


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f"... [truncated {len(text) - limit} characters]"


async def _execute(ep: Episode, validators: _Validators, call: Any, cfg: EpisodeConfig,
                   turn: int, a_turn: int) -> tuple[CallRecord, str]:
    """Run one parsed call; returns its record and the text the model sees as the result."""
    name, args = call.name, call.arguments
    schema_ok = validators.schema_ok(name, args)  # the arguments as parsed, before a server sees them
    if name not in validators.by_name:
        result = shown = f"unknown tool '{name}'"
        executed_ok, error_kind = False, "unknown_tool"
    else:
        res = await ep.call(name, args)
        result, shown = res.text, _clip(res.text, cfg.max_result_chars)
        executed_ok, error_kind = not res.is_error, res.error_kind
    entry = CallRecord(name=name, arguments=args, parsed_ok=True, schema_ok=schema_ok, turn=turn,
                       assistant_turn=a_turn, executed_ok=executed_ok, result=result, error_kind=error_kind)
    return entry, shown


def _grown(tr: Transcript, limit: int, append: Callable[..., object], *args: Any) -> Transcript | None:
    """``tr`` after ``append(tr, *args)`` if that holds at most ``limit`` tokens, else ``None``
    (``tr`` untouched). The addition is measured on a fork because its ids depend on the
    transcript's state (an owed separator, an open turn to close), not on the text alone; the fork
    is kept, so nothing is tokenized twice."""
    trial = tr.fork()
    append(trial, *args)
    return trial if len(trial) <= limit else None


async def run_episode(
    example: Example,
    policy: Policy,
    pool: MCPPool,
    template: ChatTemplate,
    tokenizer: ChatTokenizer,
    config: EpisodeConfig | None = None,
    *,
    group_id: str | None = None,
    sample_idx: int = 0,
    prefix: Transcript | None = None,
) -> Rollout:
    """Play ``example`` with ``policy`` against ``pool``; returns the Rollout record.

    ``prefix`` is an already rendered opening transcript of this example (forked, not mutated):
    the render + encode of the tool list is the costliest host step, so a group renders it once.
    """
    cfg = config or EpisodeConfig()
    if cfg.max_tokens is None:
        raise ValueError("EpisodeConfig.max_tokens is None: a run derives the cap at start-up (prove_jax.rl.caps); "
                         "set it to play an episode")
    max_tokens = cfg.max_tokens
    example = _typed(example)
    turns = example.turns
    tr = prefix.fork() if prefix is not None else Transcript.start(
        template, tokenizer, opening_messages(example), example.tools)
    validators = _Validators(example.tools)
    generated: list[tuple[int, list[float]]] = []
    calls: list[CallRecord] = []
    parse_errors: list[ParseError] = []
    finish: str | None = None
    final_state: dict[str, Any] | None = None
    user_turn = a_turn = 0
    n_user = min(len(turns), cfg.max_user_turns)
    async with pool.episode(example.servers, seed=example.seed) as ep:
        while finish is None:
            if a_turn >= cfg.max_assistant_turns:
                finish = "assistant_cap"
                break
            # the generation prompt must leave room for at least one generated token
            opened = _grown(tr, max_tokens - 1, Transcript.start_assistant)
            if opened is None:
                finish = "token_cap"
                break
            tr = opened
            budget = max_tokens - len(tr)
            gen = await policy.generate(tr.tokens, max_new_tokens=budget, stream=a_turn)
            if not gen.ids:
                finish = "token_cap"
                break
            generated.append((len(tr), list(gen.sample_logprobs)))
            tr.append_generated(gen.ids, gen.logprobs)
            parsed = parse_tool_calls(tokenizer.decode(gen.ids))
            parse_errors.extend(ParseError(turn=user_turn, assistant_turn=a_turn, reason=e.reason)
                                for e in parsed.errors)
            a_turn += 1
            if parsed.calls:
                results = []
                for call in parsed.calls:
                    entry, text = await _execute(ep, validators, call, cfg, user_turn, a_turn - 1)
                    calls.append(entry)
                    results.append(text)
                    if ep.failed:
                        break
                if ep.failed:
                    finish = "env_failed"
                    break
                with_results = _grown(tr, max_tokens, Transcript.append_tool_results, results)
                if with_results is None:  # the calls ran (and count for the reward); their results do not fit
                    finish = "token_cap"
                    break
                tr = with_results
                if len(tr) >= max_tokens:
                    finish = "token_cap"
                continue
            if user_turn + 1 >= n_user:
                user_turn += 1
                finish = "done"
                break
            with_user = _grown(tr, max_tokens, Transcript.append_user, turns[user_turn + 1].user)
            if with_user is None:  # the model never sees this user turn: it is not counted
                finish = "token_cap"
                break
            tr, user_turn = with_user, user_turn + 1
            if len(tr) >= max_tokens:
                finish = "token_cap"
        if cfg.snapshots and not ep.failed:
            final_state = await ep.snapshots()
        failed, failure = ep.failed, ep.failure
    tokens, loss_mask, logprobs = tr.as_arrays()
    sample_lp = np.zeros(len(tokens), np.float32)
    for start, values in generated:
        sample_lp[start : start + len(values)] = values
    opening = tr.spans[0].end if tr.spans and tr.spans[0].kind == "context" else 0
    return Rollout(
        example_id=example.id,
        group_id=group_id if group_id is not None else example.id,
        sample_idx=sample_idx,
        kind=example.kind,
        n_gold_calls=example.n_gold_calls,
        opening=opening,
        tokens=tokens,
        loss_mask=loss_mask,
        logprobs=logprobs,
        sample_logprobs=sample_lp,
        calls=tuple(calls),
        parse_errors=tuple(parse_errors),
        final_state=final_state,
        finish=finish,
        n_assistant_turns=a_turn,
        n_user_turns=min(user_turn + 1, n_user),
        failed=failed,
        failure=failure,
    )


async def run_rollouts(
    engine: Engine,
    pool: MCPPool,
    examples: Sequence[Example],
    template: ChatTemplate,
    tokenizer: ChatTokenizer,
    *,
    n_samples: int = 1,
    sampling: SamplingConfig | None = None,
    config: EpisodeConfig | None = None,
    seed: int = 0,
) -> list[Rollout]:
    """``n_samples`` episodes of every example (a GRPO group each), all concurrently.

    Episodes wait for a free engine slot (FIFO) and hold it for their whole life, so the KV
    cache of earlier turns is reused; while one waits for its tools, the others decode. Each
    rollout's sampling seed is :func:`sample_seed` ``(seed, example id, sample_idx)``, so results do
    not depend on the order episodes happen to be scheduled in. Returns records in
    ``(example, sample)`` order.
    """
    sp = sampling or engine.sampling
    cfg = config or EpisodeConfig()

    async def one(example: Example, prefix: Transcript, k: int) -> Rollout:
        async with engine.session(sample_seed(seed, example.id, k)) as sess:
            return await run_episode(example, EnginePolicy(sess, sp), pool, template, tokenizer, cfg,
                                     group_id=example.id, sample_idx=k, prefix=prefix)

    jobs = []
    for ex in map(_typed, examples):
        prefix = Transcript.start(template, tokenizer, opening_messages(ex), ex.tools)
        jobs.extend(one(ex, prefix, k) for k in range(n_samples))
    return list(await asyncio.gather(*jobs))
