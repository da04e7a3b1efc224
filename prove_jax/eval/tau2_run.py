"""τ²-bench, native and offline: ``python -m prove_jax.eval tau2 --domain retail|airline --split test``.

No tau2 install: the domain's data and tool server come from its wheel (:mod:`prove_jax.env.tau2`), the
conversation loop and the scoring are ours (:mod:`.tau2_score`, τ²'s published definition). Per
task trial one fresh pool session (a new server process over a fresh DB) runs this loop, as τ²'s
half-duplex orchestrator does:

1. the agent opens with τ²'s greeting ("Hi! How can I help you today?");
2. the user simulator answers from the task's scenario; a message holding ``###STOP###``,
   ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends the trial (``user_stop``);
3. the agent (system prompt: the domain policy) calls tools through the pool until it writes text,
   which goes to the user; text holding ``###STOP###`` ends the trial (``agent_stop``);
4. ``max_steps`` messages (``max_steps``) or ``max_errors`` failed tool calls (``too_many_errors``)
   end it with reward 0, as does a failure of the environment (``infrastructure_error``).

The final DB is the session's snapshot; the gold DB is a fresh session's after the task's expected
actions (once per task). Who plays whom: the policy is ``--model DIR`` (this process's engine),
``--url`` or ``--policy oracle``; the user simulator is ``--user-url`` (any OpenAI-compatible
endpoint), else the policy itself; the oracle's user, without ``--user-url``, is scripted (it states
the reason for the call, then stops once the agent has answered). ``--judge-url`` scores the NL
assertions, reported apart from the reward.

The oracle replays each task's expected actions, one call per turn, then writes every
``communicate_info`` string in its final message: it must score 1.0 on every task, which bounds the
harness. The last stdout line is JSON: ``pass_1``, ``pass_hat_k``, ``tasks``, ``below_1``,
``s_per_task``. Results: ``OUT/tau2_<domain>_<split>/results.json`` (every trial's transcript and
score).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from prove_jax.env.tau2 import Action, Task, Tau2Domain
from prove_jax.eval.tau2_score import (
    TrialScore,
    judge_messages,
    parse_judge,
    score_trial,
    summarize_trials,
)

GREETING = "Hi! How can I help you today?"  # τ²'s DEFAULT_FIRST_AGENT_MESSAGE
STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
USER_STOPS = (STOP, TRANSFER, OUT_OF_SCOPE)

AGENT_SYSTEM = """You are a customer service agent. Help the user within the policy given below.
Each turn, either write one message to the user or make tool calls; never invent information a
tool can give you.

<policy>
{policy}
</policy>"""

USER_SYSTEM = """You are a customer talking to a customer service agent; the agent's messages come to you as
the other side of this chat. Play the customer described in the scenario below.

- Write one short message per turn, as a customer would, in your own words.
- Give details only when the agent asks for them, and never make up details the scenario does not
  give you: what it does not say, you do not know.
- Keep going until what the scenario asks for is done, then write {stop} alone.
- If the agent transfers you to another agent, write {transfer}; if the scenario gives you no way
  to continue, write {out_of_scope}.

<scenario>
{scenario}
</scenario>"""


@dataclasses.dataclass(frozen=True)
class Tau2RunConfig:
    """The settings of a native τ² run (the ``tau2`` subcommand's flags)."""

    domain: str = dataclasses.field(default="retail", metadata={"choices": ("retail", "airline")})
    split: str = dataclasses.field(default="test", metadata={"choices": ("test", "train", "base")})
    trials: int = 1  # trials per task (τ²'s leaderboard: 4); pass^k for k up to it
    task_ids: tuple[str, ...] = ()  # only these tasks of the split
    limit: int | None = None  # the split's first N tasks
    max_steps: int = 100  # messages per trial (agent, user and tool) before it is cut off
    max_errors: int = 10  # failed tool calls per trial before it is cut off
    max_tokens: int = 1024  # per agent message
    temperature: float = 0.0  # agent and user sampling (0: greedy, so trials repeat)
    user_url: str | None = None  # the user simulator's OpenAI-compatible /v1 URL (default: the policy)
    user_model: str = "user"  # served model name at --user-url
    user_max_tokens: int = 256  # per user message
    judge_url: str | None = None  # an NL-assertion judge's /v1 URL (reported apart from the reward)
    judge_model: str = "judge"  # served model name at --judge-url
    judge_max_tokens: int = 512  # per verdict
    concurrency: int = 4  # trials in flight
    seed: int = 0  # sampling seed of trial 0 (trial i: seed + i)
    warm: int = 2  # server processes started ahead of the trials


class Chat(Protocol):
    async def chat(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, **kw: Any) -> Any: ...


class User(Protocol):
    async def reply(self, transcript: Sequence[Mapping[str, Any]]) -> str: ...


# ---- players ------------------------------------------------------------------------------------
class OracleAgent:
    """Replays a task's expected actions, one tool call per turn, then states its communicate_info."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.done = 0

    async def chat(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, **_: Any) -> Any:
        from prove_jax.serve.protocol import ChatReply

        if self.done < len(self.task.actions):
            a = self.task.actions[self.done]
            call = {"id": f"call_{self.done}", "type": "function",
                    "function": {"name": a.name, "arguments": json.dumps(a.arguments)}}
            self.done += 1
            return ChatReply(content="", tool_calls=[call], finish_reason="tool_calls")
        info = "; ".join(self.task.communicate_info)
        return ChatReply(content=f"Done. {info}".strip(), tool_calls=[], finish_reason="stop")


class Tau2Oracle:
    """``--policy oracle``: one :class:`OracleAgent` per task trial."""

    def __call__(self, task: Task) -> OracleAgent:
        return OracleAgent(task)


class ScriptedUser:
    """The oracle's user: the reason for the call, then ``###STOP###`` once the agent has answered."""

    def __init__(self, task: Task) -> None:
        ins = task.scenario.get("instructions")
        self.opening = str(ins.get("reason_for_call") if isinstance(ins, dict) else ins or "I need help.").strip()

    async def reply(self, transcript: Sequence[Mapping[str, Any]]) -> str:
        said = sum(m["role"] == "user" for m in transcript)
        return self.opening if said == 0 else STOP


class LLMUser:
    """A user simulator over any chat client: the scenario as its system prompt, the agent's
    messages as the other side (roles flipped), tool traffic unseen."""

    def __init__(self, client: Chat, task: Task, cfg: Tau2RunConfig, seed: int) -> None:
        self.client, self.cfg, self.seed = client, cfg, seed
        self.system = USER_SYSTEM.format(stop=STOP, transfer=TRANSFER, out_of_scope=OUT_OF_SCOPE,
                                         scenario=task.user_instructions())

    async def reply(self, transcript: Sequence[Mapping[str, Any]]) -> str:
        msgs: list[dict[str, Any]] = [{"role": "system", "content": self.system}]
        for m in transcript:  # an agent message that calls tools goes to the environment, not the user
            if m["role"] in ("user", "assistant") and m.get("content") and not m.get("tool_calls"):
                msgs.append({"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]})
        r = await self.client.chat(msgs, None, max_tokens=self.cfg.user_max_tokens,
                                   temperature=self.cfg.temperature, seed=self.seed)
        return r.content.strip()


# ---- one trial ----------------------------------------------------------------------------------
@dataclasses.dataclass
class Trial:
    task_id: str
    trial: int
    termination: str
    transcript: list[dict[str, Any]]
    final_db_hash: str | None
    tool_errors: int
    seconds: float
    error: str | None = None  # why the agent or the user simulator failed (agent_error / user_error)
    score: TrialScore | None = None


def _args_of(call: Mapping[str, Any]) -> tuple[str, Any, str | None]:
    fn = call.get("function") or {}
    raw = fn.get("arguments")
    if isinstance(raw, dict):
        return str(fn.get("name")), raw, None
    try:
        args = json.loads(raw or "{}")
    except (TypeError, ValueError) as exc:
        return str(fn.get("name")), None, f"Error: arguments are not JSON: {exc}"
    if not isinstance(args, dict):
        return str(fn.get("name")), None, "Error: arguments must be a JSON object"
    return str(fn.get("name")), args, None


async def run_trial(pool: Any, server: str, policy: str, task: Task, agent: Chat, user: User,
                    cfg: Tau2RunConfig, trial: int) -> Trial:
    """One conversation on a fresh session (see the module docstring)."""
    t0 = time.perf_counter()
    seed = cfg.seed + trial
    async with pool.episode([server], seed=seed) as ep:
        tools = ep.tools
        greet = {"role": "assistant", "content": GREETING}
        agent_msgs: list[dict[str, Any]] = [{"role": "system", "content": AGENT_SYSTEM.format(policy=policy)}, greet]
        transcript: list[dict[str, Any]] = [greet]
        steps, errors, term, error = 1, 0, "", None
        while not term:
            try:
                text = await user.reply(transcript)
            except Exception as exc:  # τ²'s USER_ERROR: the simulator failed (e.g. a prompt past its context)
                term, error = "user_error", f"{type(exc).__name__}: {exc}"[:500]
                break
            steps += 1
            transcript.append({"role": "user", "content": text})
            agent_msgs.append({"role": "user", "content": text})
            if any(s in text for s in USER_STOPS):
                term = "user_stop"
                break
            while not term:
                if steps >= cfg.max_steps:
                    term = "max_steps"
                    break
                try:
                    reply = await agent.chat(agent_msgs, tools, max_tokens=cfg.max_tokens,
                                             temperature=cfg.temperature, seed=seed)
                except Exception as exc:  # τ²'s AGENT_ERROR: reward 0, the other trials go on
                    term, error = "agent_error", f"{type(exc).__name__}: {exc}"[:500]
                    break
                steps += 1
                msg = reply.message()
                agent_msgs.append(msg)
                transcript.append(msg)
                if not reply.tool_calls:
                    if STOP in (reply.content or ""):
                        term = "agent_stop"
                    break
                for call in reply.tool_calls:
                    name, args, bad = _args_of(call)
                    if bad is None:
                        res = await ep.call(name, args)
                        out, failed = res.text, res.is_error
                    else:
                        out, failed = bad, True
                    steps += 1
                    errors += failed
                    tool = {"role": "tool", "tool_call_id": call.get("id", ""), "content": out}
                    agent_msgs.append(tool)
                    transcript.append(tool)
                if ep.failed:
                    term = "infrastructure_error"
                elif errors >= cfg.max_errors:
                    term = "too_many_errors"
            if not term and steps >= cfg.max_steps:
                term = "max_steps"
        snap = (await ep.snapshots()).get(server)
    final = None if snap is None else snap.get("db_sha256")
    return Trial(task.id, trial, term, transcript, final, errors, time.perf_counter() - t0, error=error)


async def gold_db_hash(pool: Any, server: str, actions: Sequence[Action], seed: int = 0) -> tuple[str, list[str]]:
    """The DB hash after replaying ``actions`` on a fresh session, and the failures of those actions
    (ignored for the DB, as τ² does)."""
    failures = []
    async with pool.episode([server], seed=seed) as ep:
        for a in actions:
            res = await ep.call(a.name, a.arguments)
            if res.is_error:
                failures.append(f"{a.name}: {res.text[:200]}")
        snap = (await ep.snapshots()).get(server)
    if snap is None:
        raise RuntimeError(f"{server}: no snapshot of the gold session")
    return str(snap["db_sha256"]), failures


# ---- a run --------------------------------------------------------------------------------------
async def evaluate(cfg: Tau2RunConfig, agent_for: Callable[[Task], Chat], user_for: Callable[[Task, int], User],
                   run_dir: Path, judge: Chat | None = None, progress: bool = True) -> dict[str, Any]:
    """Every task x trial of ``cfg``'s split; returns the summary (and writes results.json)."""
    from prove_jax.env import MCPPool

    domain = Tau2Domain.load(cfg.domain)
    tasks = domain.tasks(cfg.split, cfg.task_ids, cfg.limit)
    backend = domain.backend(run_dir / "sessions", warm=cfg.warm)
    t0 = time.perf_counter()
    async with MCPPool({backend.domain: backend}, call_timeout_s=60.0) as pool:
        sem = asyncio.Semaphore(cfg.concurrency)

        async def gold_of(task: Task) -> tuple[str, list[str]]:
            async with sem:
                return await gold_db_hash(pool, backend.domain, task.actions)

        gold = dict(zip([t.id for t in tasks], await asyncio.gather(*(gold_of(t) for t in tasks)), strict=True))

        async def one(task: Task, i: int) -> Trial:
            async with sem:
                tr = await run_trial(pool, backend.domain, domain.policy, task, agent_for(task), user_for(task, i),
                                     cfg, i)
                texts = [m.get("content") or "" for m in tr.transcript if m["role"] == "assistant"]
                nl = None
                if judge is not None and task.nl_assertions and tr.termination in ("agent_stop", "user_stop"):
                    try:
                        r = await judge.chat(judge_messages(tr.transcript, task.nl_assertions), None,
                                             max_tokens=cfg.judge_max_tokens)
                        nl = parse_judge(r.content, len(task.nl_assertions))
                    except Exception as exc:  # a judge that fails leaves the assertions unmet, said why
                        nl = [False] * len(task.nl_assertions)
                        tr.error = f"judge: {type(exc).__name__}: {exc}"[:500]
                elif judge is not None:
                    nl = [] if tr.termination in ("agent_stop", "user_stop") else [False]
                if tr.error:
                    print(f"[tau2] {cfg.domain} task {task.id} trial {i}: {tr.termination}: {tr.error}",
                          file=sys.stderr, flush=True)
                tr.score = score_trial(task.reward_basis, tr.termination, tr.final_db_hash, gold[task.id][0],
                                       task.communicate_info, texts, nl)
                if progress:
                    print(f"[tau2] {cfg.domain} task {task.id} trial {i}: reward {tr.score.reward:.0f} "
                          f"({tr.termination}, {tr.seconds:.1f}s)", file=sys.stderr, flush=True)
                return tr

        trials = await asyncio.gather(*(one(t, i) for t in tasks for i in range(cfg.trials)))
    wall = time.perf_counter() - t0
    by_task: dict[str, list[TrialScore]] = {t.id: [] for t in tasks}
    for tr in trials:
        assert tr.score is not None
        by_task[tr.task_id].append(tr.score)
    summary = summarize_trials(by_task)
    summary.update(domain=cfg.domain, split=cfg.split, wall_s=round(wall, 2),
                   s_per_task=round(wall / max(1, len(tasks)), 3),
                   s_per_trial=round(sum(t.seconds for t in trials) / max(1, len(trials)), 3),
                   gold_action_failures={k: v[1] for k, v in gold.items() if v[1]},
                   errors=sorted({tr.error for tr in trials if tr.error})[:5],
                   nl_scored=judge is not None)
    run_dir.mkdir(parents=True, exist_ok=True)
    rows = [{**dataclasses.asdict(tr), "score": dataclasses.asdict(tr.score) if tr.score else None} for tr in trials]
    (run_dir / "results.json").write_text(json.dumps({"config": dataclasses.asdict(cfg), "summary": summary,
                                                      "trials": rows}, indent=1) + "\n")
    return summary


async def run_suite(cfg: Any, ctx: Any) -> dict[str, Any]:
    """The suite's τ² (``eval all``, the launcher's eval stage) with ``runner: native``: every domain of
    ``cfg`` (a :class:`~prove_jax.eval.settings.Tau2Config`) on ``ctx.client``, the policy; the user
    simulator is ``cfg.user_base_url`` when given, else the policy itself; NL assertions are judged
    only with ``cfg.judge_base_url``. Returns the shape the report reads (percent, ``pass^k`` per
    domain, ``avg`` = mean pass^1); a domain the wheels lack (telecom) is a failed domain."""
    from prove_jax.env.tau2 import DOMAINS
    from prove_jax.serve import OpenAIChat

    oracle = isinstance(ctx.client, Tau2Oracle)  # ground truth replayed (a scripted user unless a URL is given)
    user_client = OpenAIChat(cfg.user_base_url, cfg.user_model or "user") if cfg.user_base_url else None
    judge = OpenAIChat(cfg.judge_base_url, cfg.judge_model or "judge") if cfg.judge_base_url else None
    domains: dict[str, Any] = {}
    failed: dict[str, Any] = {}
    try:
        for d in cfg.domains:
            if d not in DOMAINS:
                failed[d] = {"error": f"no offline data for τ² {d!r} (the wheels carry {sorted(DOMAINS)})"}
                continue
            run = Tau2RunConfig(domain=d, split=cfg.task_split, trials=cfg.num_trials, task_ids=tuple(cfg.task_ids),
                                limit=cfg.num_tasks, max_steps=cfg.max_steps, max_errors=cfg.max_errors,
                                max_tokens=cfg.max_tokens, user_max_tokens=min(256, cfg.max_tokens),
                                temperature=cfg.temperature,
                                concurrency=cfg.max_concurrency, seed=cfg.seed)

            def user_for(task: Task, trial: int, run: Tau2RunConfig = run) -> User:
                if oracle and user_client is None:
                    return ScriptedUser(task)
                return LLMUser(user_client or ctx.client, task, run, run.seed + trial)

            s = await evaluate(run, ctx.client if oracle else lambda task: ctx.client, user_for,
                               Path(ctx.out_dir) / d, judge, progress=ctx.progress)
            ks = {f"pass^{k}": 100.0 * v for k, v in s["pass_hat_k"].items()}
            domains[d] = {**ks, "pass_hat_k": ks, "n_tasks": s["tasks"], "split": s["split"],
                          "avg_reward": s["avg_reward"], "db_match": s["db_match"], "s_per_task": s["s_per_task"],
                          "terminations": s["terminations"], "below_1": sorted(s["below_1"]), "errors": s["errors"]}
    finally:
        for c in (user_client, judge):
            if c is not None:
                await c.aclose()
    scored = [d for d, v in domains.items() if v.get("pass^1") is not None]
    user = cfg.user_base_url or ("scripted" if oracle else "the policy itself")
    return {"benchmark": "tau2-bench (native, offline)", "scale": "percent", "domains": domains,
            "failed_domains": failed, "avg": sum(domains[d]["pass^1"] for d in scored) / len(scored) if scored else None,
            "avg_domains": scored, "user_simulator": user, "nl_judge": cfg.judge_base_url,
            "note": f"native τ² on the wheels' data, user simulator: {user}, {cfg.num_trials} trial(s), "
                    f"split {cfg.task_split}; NL assertions {'judged' if judge else 'not scored'}: "
                    "not comparable to the leaderboard unless its user simulator, judge and 4 trials"}


# ---- CLI ----------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    from prove_jax.cli import add_dataclass_args
    from prove_jax.eval.__main__ import _policy_args

    p = argparse.ArgumentParser(prog="python -m prove_jax.eval tau2", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    _policy_args(p, "client")
    add_dataclass_args(p.add_argument_group("τ² settings"), Tau2RunConfig)
    return p.parse_args(list(argv))


def main(argv: Sequence[str]) -> int:
    from prove_jax.cli import dataclass_from_args
    from prove_jax.eval.__main__ import _with_policy
    from prove_jax.eval.registry import get
    from prove_jax.serve import OpenAIChat

    args = parse_args(argv)
    cfg = dataclass_from_args(Tau2RunConfig, args)
    run_dir = Path(args.out) / f"tau2_{cfg.domain}_{cfg.split}"

    async def go(client: Any, name: str) -> dict[str, Any]:
        oracle = isinstance(client, Tau2Oracle)
        user_client = OpenAIChat(cfg.user_url, cfg.user_model) if cfg.user_url else None
        judge = OpenAIChat(cfg.judge_url, cfg.judge_model) if cfg.judge_url else None

        def agent_for(task: Task) -> Chat:
            return client(task) if oracle else client

        def user_for(task: Task, trial: int) -> User:
            if user_client is None and oracle:
                return ScriptedUser(task)
            return LLMUser(user_client or client, task, cfg, cfg.seed + trial)

        try:
            summary = await evaluate(cfg, agent_for, user_for, run_dir, judge)
        finally:
            for c in (user_client, judge):
                if c is not None:
                    await c.aclose()
        summary["policy"] = name
        summary["user_simulator"] = cfg.user_url or ("scripted" if oracle else f"{name} (the policy itself)")
        return summary

    summary = asyncio.run(_with_policy(args, get("tau2"), go))
    for tid, why in summary["below_1"].items():
        print(f"below 1.0: {cfg.domain} task {tid}: {'; '.join(why)}")
    print(json.dumps(summary))
    return 0
