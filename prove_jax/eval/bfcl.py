"""BFCL Multi-Turn with bfcl-eval's own data, environment and checker; our code only drives the policy.

``python -m prove_jax.eval bfcl --model DIR`` (the JAX engine in this process) or ``--url
http://host:port/v1 --served-model NAME`` (any OpenAI-compatible server, e.g. ``prove_jax.serve``)
plays the four multi-turn categories (base, miss_func, miss_param, long_context; 200 entries
each) the way bfcl-eval's function-calling inference loop does:

* each entry starts with its functions as tools (BFCL's func docs, types mapped with bfcl's own
  ``GORILLA_TO_OPENAPI`` table) and no system prompt; turns are appended as they come;
* a held-out function (miss_func) joins the tools at its turn, whose user message is bfcl's
  ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``;
* within a turn the policy is queried, its calls are executed by bfcl's executor (in a worker
  process, see :mod:`prove_jax.eval.bfcl_exec`) and the results appended as tool messages,
  until it answers without a call; more than ``MAXIMUM_STEP_LIMIT`` steps in one turn
  force-terminates the entry (it fails);
* each entry is scored by ``multi_turn_checker`` (state and response checks per turn).

A request the policy cannot serve (the conversation outgrew its context) ends the entry like a
force-termination and is counted separately (``context_exceeded``). Outputs, in bfcl's layouts:
``result/<model>/multi_turn/BFCL_v4_<cat>_result.json`` (so ``bfcl evaluate`` can re-score
them), ``score/<model>/multi_turn/BFCL_v4_<cat>_score.json`` (accuracy line, then each failed
entry) and ``score/data_multi_turn.csv``; plus ``bfcl.json`` with per-category accuracy, the
unweighted overall and error-type counts.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import copy
import functools
import json
import multiprocessing
import os
import time
import types
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from prove_jax.eval import bfcl_exec
from prove_jax.eval.settings import CATEGORIES, SHORT, BfclConfig
from prove_jax.serve.protocol import ChatClient, ChatReply

VERSION_PREFIX = "BFCL_v4"


def bfcl_root(out_dir: Path) -> Path:
    """Set ``BFCL_PROJECT_ROOT`` (unless the user did) before bfcl_eval is imported anywhere."""
    root = Path(os.environ.setdefault("BFCL_PROJECT_ROOT", str(out_dir / "bfcl_root")))
    root.mkdir(parents=True, exist_ok=True)
    return root


@functools.cache
def _bfcl() -> types.SimpleNamespace:
    """bfcl-eval's pieces the driver needs (imported once, lazily, after BFCL_PROJECT_ROOT is set)."""
    if not os.environ.get("BFCL_PROJECT_ROOT"):
        raise RuntimeError("call bfcl_root(out_dir) before loading bfcl data")
    try:
        from bfcl_eval.constants import default_prompts, type_mappings
        from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry
    except ImportError as exc:
        raise SystemExit("BFCL needs bfcl-eval's multi-turn core: pip install --no-deps bfcl-eval==2026.3.23 "
                         f"({exc})") from None
    return types.SimpleNamespace(load=load_dataset_entry, truth=load_ground_truth_entry,
                                 types=type_mappings.GORILLA_TO_OPENAPI, prompts=default_prompts)


# ---- function docs -> OpenAI tools ------------------------------------------------------------
def _cast(schema: dict[str, Any], types: Mapping[str, str]) -> dict[str, Any]:
    """One property schema with BFCL's type names mapped to JSON Schema's (recursively), the way
    bfcl's OpenAI handler compiles tools (floats are tagged in the description and ``format``)."""
    out = dict(schema)
    t = out.get("type")
    if t is None:
        out["type"] = "string"
    else:
        if t == "float":
            out["format"] = "float"
            out["description"] = out.get("description", "") + " This is a float type value."
        out["type"] = types.get(t, "string")
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _cast(v, types) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _cast(out["items"], types)
    return out


def to_tools(functions: Sequence[Mapping[str, Any]], types: Mapping[str, str]) -> list[dict[str, Any]]:
    tools = []
    for fn in copy.deepcopy(list(functions)):
        params = fn.get("parameters") or {"type": "dict", "properties": {}}
        params["type"] = "object"
        params["properties"] = {k: _cast(v, types) for k, v in (params.get("properties") or {}).items()}
        tool = {"name": fn["name"].replace(".", "_"), "description": fn.get("description", ""), "parameters": params}
        if "response" in fn:
            tool["response"] = fn["response"]
        tools.append({"type": "function", "function": tool})
    return tools


def call_strings(tool_calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """OpenAI tool calls as bfcl call strings (``f(a=1,b='x')``), as bfcl's FC decoder writes them.
    Raises ValueError when an ``arguments`` string is not a JSON object (the turn then ends)."""
    out = []
    for call in tool_calls:
        fn = call["function"]
        args = fn.get("arguments") or "{}"
        args = json.loads(args) if isinstance(args, str) else args
        if not isinstance(args, dict):
            raise ValueError(f"arguments of {fn['name']} are not an object")
        out.append(f"{fn['name']}({','.join(f'{k}={v!r}' for k, v in args.items())})")
    return out


# ---- executor workers -------------------------------------------------------------------------
class Workers:
    """``n`` single-process pools; an entry's calls always go to the same one (its instances)."""

    def __init__(self, n: int, timeout: float = 60.0) -> None:
        self.n, self.timeout = max(1, n), timeout
        self._ctx = multiprocessing.get_context("spawn")  # never fork a process holding JAX threads
        self.pools = [self._new() for _ in range(self.n)]

    def _new(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=self._ctx)

    async def run(self, index: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in worker ``index``; a worker that hangs or dies is replaced, and the
        call raises (the entry then fails, the run goes on)."""
        k = index % self.n
        pool = self.pools[k]
        try:
            return await asyncio.wait_for(asyncio.wrap_future(pool.submit(fn, *args)), self.timeout)
        except (TimeoutError, concurrent.futures.process.BrokenProcessPool):
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            self.pools[k] = self._new()
            raise

    def close(self) -> None:
        for pool in self.pools:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- one entry --------------------------------------------------------------------------------
async def play(client: ChatClient, entry: Mapping[str, Any], workers: Workers, index: int, rollout_name: str,
               cfg: BfclConfig) -> dict[str, Any]:
    """bfcl's multi-turn FC loop for one entry; returns the result record and a decoded copy."""
    b = _bfcl()
    functions = copy.deepcopy(list(entry["function"]))
    holdout: Mapping[str, Any] = entry.get("missed_function") or {}
    messages: list[dict[str, Any]] = []
    result: list[list[Any]] = []
    turns: list[list[list[str]]] = []
    stop, steps, calls = None, 0, 0
    for t, turn_msgs in enumerate(entry["question"]):
        if str(t) in holdout:
            functions += copy.deepcopy(holdout[str(t)])
            turn_msgs = [{"role": "user", "content": b.prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC}]
        tools = to_tools(functions, b.types)
        messages += [dict(m) for m in turn_msgs]
        responses: list[Any] = []
        decoded_turn: list[list[str]] = []
        count = 0
        while True:
            try:
                reply: ChatReply = await client.chat(messages, tools, max_tokens=cfg.max_tokens,
                                                     temperature=cfg.temperature, seed=index)
            except Exception as exc:  # the policy could not answer (context full, server gone)
                stop = f"policy_error: {exc}"[:300]
                break
            messages.append(reply.message())
            steps += 1
            if reply.tool_calls:
                responses.append([{c["function"]["name"]: c["function"]["arguments"]} for c in reply.tool_calls])
            else:
                responses.append(reply.content)
            try:
                strings = call_strings(reply.tool_calls)
            except (ValueError, KeyError, TypeError):
                break
            if not strings:
                break
            decoded_turn.append(strings)
            calls += len(strings)
            try:
                outputs = await workers.run(index, bfcl_exec.execute, strings, dict(entry), rollout_name)
            except Exception as exc:
                stop = f"executor_error: {exc!r}"[:300]
                break
            for out, call in zip(outputs, reply.tool_calls, strict=False):
                messages.append({"role": "tool", "content": out, "tool_call_id": call.get("id", "")})
            count += 1
            if count > b.prompts.MAXIMUM_STEP_LIMIT:
                stop = "step_limit"
                break
        result.append(responses)
        turns.append(decoded_turn)
        if stop:
            break
    return {"id": entry["id"], "result": result, "turns": turns, "stop": stop, "steps": steps, "calls": calls}


async def score_entry(played: Mapping[str, Any], truth: list[list[str]], entry: Mapping[str, Any], workers: Workers,
                      index: int, rollout_name: str) -> dict[str, Any]:
    try:
        verdict = await workers.run(index, bfcl_exec.check, played["turns"], truth, dict(entry), rollout_name)
    except Exception as exc:
        verdict = {"valid": False, "error_type": "prove_jax:checker_failed", "error": repr(exc)[:300]}
    if played["stop"] and played["stop"].startswith("policy_error"):
        verdict = {**verdict, "valid": False, "error_type": "prove_jax:policy_error", "error": played["stop"]}
    return verdict


# ---- a whole run ------------------------------------------------------------------------------
def load_category(category: str, limit: int | None) -> tuple[list[dict[str, Any]], dict[str, list[list[str]]]]:
    b = _bfcl()
    entries = b.load(category)
    truth = {g["id"]: g["ground_truth"] for g in b.truth(category)}
    entries = entries[:limit] if limit is not None else entries
    return entries, truth


async def evaluate(client: ChatClient | Callable[[Mapping[str, Any]], ChatClient], out_dir: str | Path,
                   model_name: str, cfg: BfclConfig | None = None, *, progress: bool = True) -> dict[str, Any]:
    """Play and score every entry of ``cfg.categories``; writes bfcl's result/score files and
    ``bfcl.json`` under ``out_dir`` and returns the summary.

    ``client`` is one policy, or a factory giving a policy per entry (an oracle, a scripted test).
    """
    cfg = cfg or BfclConfig()
    out = Path(out_dir)
    root = bfcl_root(out)
    run_id = uuid.uuid4().hex[:8]
    sem = asyncio.Semaphore(cfg.concurrency)
    t0 = time.perf_counter()
    summary: dict[str, Any] = {"model": model_name, "categories": {}, "bfcl_project_root": str(root)}
    with Workers(cfg.workers, cfg.step_timeout) as workers:
        for category in cfg.categories:
            entries, truth = load_category(category, cfg.limit)
            bar = tqdm(total=len(entries), desc=f"bfcl {SHORT.get(category, category)}", disable=not progress)
            pairs = await asyncio.gather(*(
                _entry(client, e, truth[e["id"]], workers, i, f"pj_{run_id}_{category}_{i}", cfg, sem, bar)
                for i, e in enumerate(entries)))
            bar.close()
            summary["categories"][category] = _write_category(root, model_name, category, entries, truth, pairs)
    cats = summary["categories"]
    summary["overall"] = sum(c["accuracy"] for c in cats.values()) / len(cats) if cats else 0.0
    summary["wall_s"] = round(time.perf_counter() - t0, 2)
    _write_csv(root, model_name, summary)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bfcl.json").write_text(json.dumps(summary, indent=2))
    return summary


async def _entry(client: Any, entry: dict[str, Any], truth: list[list[str]], workers: Workers, index: int,
                 name: str, cfg: BfclConfig, sem: asyncio.Semaphore, bar: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    async with sem:
        policy = client(entry) if callable(client) and not hasattr(client, "chat") else client
        played = await play(policy, entry, workers, index, name, cfg)
        verdict = await score_entry(played, truth, entry, workers, index, name)
    bar.update(1)
    return played, verdict


def _write_category(root: Path, model: str, category: str, entries: Sequence[Mapping[str, Any]],
                    truth: Mapping[str, Any], pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    safe = model.replace("/", "_")
    res_dir, score_dir = root / "result" / safe / "multi_turn", root / "score" / safe / "multi_turn"
    res_dir.mkdir(parents=True, exist_ok=True)
    score_dir.mkdir(parents=True, exist_ok=True)
    with open(res_dir / f"{VERSION_PREFIX}_{category}_result.json", "w") as f:
        for played, _ in pairs:
            f.write(json.dumps({"id": played["id"], "result": played["result"]}, ensure_ascii=False) + "\n")
    correct = sum(1 for _, v in pairs if v["valid"])
    acc = correct / len(pairs) if pairs else 0.0
    failed = [{"id": p["id"], "model_name": model, "test_category": category, "valid": False,
               "error": {"error_message": v.get("error"), "error_type": v.get("error_type")},
               "model_result_decoded": p["turns"], "possible_answer": truth[p["id"]]}
              for p, v in pairs if not v["valid"]]
    with open(score_dir / f"{VERSION_PREFIX}_{category}_score.json", "w") as f:
        f.write(json.dumps({"accuracy": acc, "correct_count": correct, "total_count": len(pairs)}) + "\n")
        for item in failed:
            f.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
    n = max(1, len(pairs))
    return {"accuracy": acc, "correct": correct, "total": len(pairs),
            "errors": dict(Counter(str(v.get("error_type")) for _, v in pairs if not v["valid"])),
            "steps_per_entry": sum(p["steps"] for p, _ in pairs) / n,
            "calls_per_entry": sum(p["calls"] for p, _ in pairs) / n,
            "stopped": dict(Counter(str(p["stop"]).split(":")[0] for p, _ in pairs if p["stop"]))}


def _write_csv(root: Path, model: str, summary: Mapping[str, Any]) -> None:
    """``score/data_multi_turn.csv`` in bfcl's column layout (percentages, 2 decimals)."""
    cats = summary["categories"]

    def pct(c: str) -> str:
        return f"{cats[c]['accuracy'] * 100:.2f}%" if c in cats else "N/A"

    lines = ["Rank,Model,Multi Turn Overall Acc,Base,Miss Func,Miss Param,Long Context",
             f"1,{model},{summary['overall'] * 100:.2f}%,{','.join(pct(c) for c in CATEGORIES)}"]
    (root / "score").mkdir(parents=True, exist_ok=True)
    (root / "score" / "data_multi_turn.csv").write_text("\n".join(lines) + "\n")


# ---- the oracle (ground truth replayed through the same driver) --------------------------------
def parse_call_string(call: str, params: Mapping[str, Sequence[str]]) -> tuple[str, dict[str, Any]]:
    """``"f('x', b=1)"`` -> ``("f", {"a": "x", "b": 1})``; positional arguments are named by the
    function's parameter order in ``params`` (its doc's ``properties``)."""
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
        raise ValueError(f"not a call: {call!r}")
    name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
    names = list(params.get(name, ()))
    if len(node.args) > len(names):
        raise ValueError(f"{call!r}: more positional arguments than {name} has parameters")
    args = {names[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg})
    return name, args


class OracleChat:
    """A policy that answers each turn with its ground-truth calls (all in one step), then a
    short text; turns with no ground truth get text at once. Knows the turn from the number of
    user messages. Used to bound the harness: it must score 100 %."""

    def __init__(self, truth: Sequence[Sequence[str]], drop: tuple[int, int] | None = None) -> None:
        self.truth = [list(t) for t in truth]
        if drop is not None:  # (turn, call index) left out: a negative control
            del self.truth[drop[0]][drop[1]]

    async def chat(self, messages: Sequence[Mapping[str, Any]], tools: Any = None, **_: Any) -> ChatReply:
        turn = sum(1 for m in messages if m["role"] == "user") - 1
        since_user = 0
        for m in reversed(messages):
            if m["role"] == "user":
                break
            since_user += m["role"] == "assistant"
        calls = self.truth[turn] if turn < len(self.truth) and since_user == 0 else []
        if not calls:
            return ChatReply(content="Done.", tool_calls=[], finish_reason="stop")
        params = {t["function"]["name"]: list(t["function"]["parameters"].get("properties", {})) for t in tools or ()}
        tool_calls = []
        for k, c in enumerate(calls):
            name, args = parse_call_string(c, params)
            tool_calls.append({"id": f"call_{turn}_{k}", "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args)}})
        return ChatReply(content="", tool_calls=tool_calls, finish_reason="tool_calls")


def oracle() -> Callable[[Mapping[str, Any]], OracleChat]:
    """A per-entry policy factory replaying each entry's ground truth (``eval bfcl --policy
    oracle``): it must score 100 %, which bounds the harness. Truth is loaded per category on
    first use (after :func:`evaluate` has set ``BFCL_PROJECT_ROOT``)."""
    truths: dict[str, list[list[str]]] = {}
    loaded: set[str] = set()

    def make(entry: Mapping[str, Any]) -> OracleChat:
        category = str(entry["id"]).rsplit("_", 1)[0]
        if category not in loaded:
            truths.update({g["id"]: g["ground_truth"] for g in _bfcl().truth(category)})
            loaded.add(category)
        return OracleChat(truths[entry["id"]])

    return make
