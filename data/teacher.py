"""The optional LLM teacher (paper §3.2: Gemma-4-31B there; any OpenAI-compatible endpoint here).

It does the three things the paper's teacher does, on top of a programmatic draft of the same slot:

1. **writes the user turns** — rewords each drafted turn in the persona's voice, keeping every value a
   call needs verbatim (:meth:`data.llm.LLMTeacher.paraphrase`; a reword that drops one is refused);
2. **makes the tool calls** — plays the assistant with the example's visible tools over the chat
   completions ``tools`` API; every call runs on the example's own live sessions, and the results go
   back to it until it answers in text. Its calls, in the order made (parallel calls share a step),
   become the gold; calls that error are kept as ``expect_error`` (the model saw them fail);
3. **writes the replies** — its final text of each turn.

Our gate stays in charge: the finished record goes through the same validator as the programmatic
teacher's (strict replay, no-op writes, label resolution, provenance, ids) and dedup. Anything the
endpoint does wrong (HTTP error, no final answer within ``max_calls``, unknown tools, arguments that
are not JSON) leaves the programmatic draft in place, so the LLM adds variety but never breaks a build.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx

from data.catalog import Catalog
from data.config import LLMConfig
from data.llm import ChatClient, LLMTeacher


class TeacherError(RuntimeError):
    """The endpoint did not produce a usable turn."""


class AgentTeacher(LLMTeacher):
    """Writes user turns, makes the calls and writes the replies of a drafted example."""

    def __init__(self, cfg: LLMConfig, catalog: Catalog, transport: httpx.BaseTransport | None = None,
                 max_calls: int = 8) -> None:
        super().__init__(cfg, transport)
        self.catalog = catalog
        self.max_calls = max_calls
        self.model_id = f"llm:{cfg.model}"

    def _chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        client: ChatClient = self.client
        body = {"model": client.cfg.model, "messages": messages, "tools": tools,
                "temperature": client.cfg.temperature}
        resp = client.http.post("/chat/completions", json=body)
        resp.raise_for_status()
        return dict(resp.json()["choices"][0]["message"])

    def rewrite(self, draft: dict[str, Any], style: str, tag: str) -> dict[str, Any]:
        """A new record with the teacher's turns, calls and replies; ``draft`` when anything fails."""
        try:
            return self._rewrite(draft, style, tag)
        except (TeacherError, httpx.HTTPError, KeyError, IndexError, TypeError, ValueError):
            return draft

    def _rewrite(self, draft: dict[str, Any], style: str, tag: str) -> dict[str, Any]:
        ex = copy.deepcopy(draft)
        tools = ex["tools"]
        visible = {t["function"]["name"] for t in tools}
        sessions = {d: f"teacher:{tag}:{d}" for d in ex["servers"]}
        seed = ex["seed"]
        for d, s in sessions.items():
            self.catalog.reset(d, s, seed)
        messages: list[dict[str, Any]] = [{"role": "system", "content": ex["system"]}]
        step = 0
        try:
            for turn in ex["turns"]:
                keep = sorted({str(v) for g in turn["gold"] for c in g["calls"] for v in c["arguments"].values()
                               if not isinstance(v, list | dict) and str(v) in turn["user"] and len(str(v)) > 1})
                turn["user"] = self.paraphrase(turn["user"], keep, style)
                messages.append({"role": "user", "content": turn["user"]})
                gold, reply = [], None
                calls = 0
                while reply is None:
                    msg = self._chat(messages, tools)
                    tool_calls = msg.get("tool_calls") or []
                    if not tool_calls:
                        reply = str(msg.get("content") or "").strip()
                        if not reply:
                            raise TeacherError("empty answer")
                        break
                    calls += len(tool_calls)
                    if calls > self.max_calls:
                        raise TeacherError("too many calls")
                    messages.append({"role": "assistant", "content": msg.get("content") or "", "tool_calls": tool_calls})
                    made = []
                    for tc in tool_calls:
                        name = tc["function"]["name"]
                        if name not in visible:
                            raise TeacherError(f"unknown tool {name}")
                        args = json.loads(tc["function"].get("arguments") or "{}")
                        if not isinstance(args, dict):
                            raise TeacherError("arguments are not an object")
                        domain = self.catalog.tools[name].domain
                        text, err = self.catalog.call(domain, name, args, sessions[domain], seed)
                        made.append({"name": name, "arguments": args, **({"expect_error": True} if err else {})})
                        messages.append({"role": "tool", "tool_call_id": tc.get("id", name), "content": text})
                    gold.append({"step": step, "calls": made, "depends_on": [step - 1] if step else []})
                    step += 1
                messages.append({"role": "assistant", "content": reply})
                turn["gold"], turn["reply"] = gold, reply
        finally:
            for d, s in sessions.items():
                self.catalog.close(d, s, seed)
        ex["complexity"].update(n_calls=sum(len(g["calls"]) for t in ex["turns"] for g in t["gold"]), n_steps=step)
        ex["meta"]["teacher"] = self.model_id
        from data.machine import dedup_items

        ex["meta"]["dedup_items"] = dedup_items(ex["turns"], ex["meta"])
        return ex
