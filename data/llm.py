"""Optional LLM help over any OpenAI-compatible ``/chat/completions`` endpoint (off by default).

Two uses, both behind config (``llm.base_url`` + ``llm.model``): a pair classifier for the dependency
graph (the paper's choice; ours defaults to the programmatic one) and a teacher that paraphrases user
turns. Both are defensive: a reply that does not parse, or a paraphrase that drops a value the gold
calls need, falls back to the programmatic result, so an LLM can add variety but never break grounding.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import httpx

from data.catalog import ToolInfo
from data.config import LLMConfig
from data.graph import EXPLICIT, IMPLICIT, NONE, classify_pair

RELATIONS = (EXPLICIT, IMPLICIT, NONE)


class ChatClient:
    """Minimal chat-completions client (``transport`` lets tests inject ``httpx.MockTransport``)."""

    def __init__(self, cfg: LLMConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.cfg = cfg
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(cfg.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.http = httpx.Client(base_url=cfg.base_url.rstrip("/"), headers=headers, timeout=cfg.timeout_s,
                                 transport=transport)

    def complete(self, messages: list[dict[str, str]], temperature: float | None = None) -> str:
        body = {"model": self.cfg.model, "messages": messages,
                "temperature": self.cfg.temperature if temperature is None else temperature}
        resp = self.http.post("/chat/completions", json=body)
        resp.raise_for_status()
        return str(resp.json()["choices"][0]["message"]["content"])


def _tool_card(t: ToolInfo) -> dict[str, Any]:
    return {"name": t.name, "description": t.summary, "parameters": sorted(t.params), "produces": list(t.produces),
            "consumes": list(t.consumes), "requires": list(t.requires), "establishes": list(t.establishes),
            "read_only": t.read_only}


def classifier_messages(tools: list[ToolInfo], pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The prompt: tool cards, the ordered pairs, and the exact JSON answer format."""
    system = ("You classify ordered pairs (A, B) of API tools. 'explicit': an output of A is a required "
              "input of B. 'implicit': A must run first to put the system in a state B needs (no data "
              "flows). 'none': neither. Answer with JSON only: {\"pairs\": [{\"a\": ..., \"b\": ..., "
              "\"relation\": \"explicit|implicit|none\"}]}, one entry per pair, in the given order.")
    user = json.dumps({"tools": [_tool_card(t) for t in tools], "pairs": [list(p) for p in pairs]})
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_classification(text: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """``{(a, b): relation}`` for the asked pairs the reply answered validly (fences and prose tolerated)."""
    m = re.search(r"\{.*\}", text, flags=re.S)
    if not m:
        return {}
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return {}
    asked = set(pairs)
    out: dict[tuple[str, str], str] = {}
    for item in data.get("pairs", []) if isinstance(data, dict) else []:
        if not isinstance(item, dict):
            continue
        key = (str(item.get("a")), str(item.get("b")))
        rel = str(item.get("relation", "")).lower().strip()
        if key in asked and rel in RELATIONS:
            out[key] = rel
    return out


class LLMClassifier:
    """Graph classifier backed by an LLM; unanswered pairs fall back to the programmatic rule."""

    def __init__(self, cfg: LLMConfig, transport: httpx.BaseTransport | None = None, batch: int = 60) -> None:
        self.client = ChatClient(cfg, transport)
        self.batch = batch
        self.classifier_id = f"llm:{cfg.model}"

    def classify_domain(self, tools: list[ToolInfo]) -> dict[tuple[str, str], dict[str, Any]]:
        by_name = {t.name: t for t in tools}
        pairs = [(a.name, b.name) for a in tools for b in tools if a.name != b.name]
        edges: dict[tuple[str, str], dict[str, Any]] = {}
        for i in range(0, len(pairs), self.batch):
            chunk = pairs[i:i + self.batch]
            try:
                answer = parse_classification(self.client.complete(classifier_messages(tools, chunk), 0.0), chunk)
            except httpx.HTTPError:
                answer = {}
            for a, b in chunk:
                rel = answer.get((a, b))
                if rel is None:
                    edge = classify_pair(by_name[a], by_name[b])
                    if edge is not None:
                        edges[(a, b)] = edge
                elif rel != NONE:
                    edges[(a, b)] = {"relation": rel, "types": [], "conditions": [], "via": "llm"}
        return edges


class LLMTeacher:
    """Paraphrases a user turn in the persona's voice, keeping every value the gold calls need."""

    def __init__(self, cfg: LLMConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.client = ChatClient(cfg, transport)

    def paraphrase(self, text: str, keep: list[str], style: str) -> str:
        messages = [
            {"role": "system", "content": "Rewrite the user's message to an assistant so it sounds natural, in a "
                                          f"{style} tone. Keep every quoted value below exactly as written. "
                                          "Reply with the rewritten message only."},
            {"role": "user", "content": json.dumps({"message": text, "keep_verbatim": keep})},
        ]
        try:
            out = self.client.complete(messages).strip()
        except httpx.HTTPError:
            return text
        return out if out and all(k in out for k in keep) else text
