"""Optional LLM classifier/teacher: prompt building and reply parsing, against a fake transport."""

from __future__ import annotations

import json

import httpx

from data.catalog import get_catalog
from data.config import LLMConfig
from data.graph import EXPLICIT, IMPLICIT, classify_pair
from data.llm import LLMClassifier, LLMTeacher, classifier_messages, parse_classification

CFG = LLMConfig(base_url="http://llm.test/v1", model="fake-model")


def _reply(content: str) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": content}}]})


def test_prompt_lists_tools_and_pairs() -> None:
    tools = [get_catalog().tools[n] for n in ("start_engine", "shift_gear")]
    msgs = classifier_messages(tools, [("start_engine", "shift_gear")])
    body = json.loads(msgs[1]["content"])
    assert [t["name"] for t in body["tools"]] == ["start_engine", "shift_gear"]
    assert body["pairs"] == [["start_engine", "shift_gear"]]
    assert "explicit" in msgs[0]["content"] and "implicit" in msgs[0]["content"]


def test_parse_tolerates_fences_and_drops_bad_entries() -> None:
    text = '```json\n{"pairs": [{"a": "x", "b": "y", "relation": "Implicit"}, {"a": "x", "b": "z", ' \
           '"relation": "sometimes"}, {"a": "q", "b": "r", "relation": "none"}]}\n```'
    assert parse_classification(text, [("x", "y"), ("x", "z")]) == {("x", "y"): "implicit"}
    assert parse_classification("no json here", [("x", "y")]) == {}


def test_classifier_uses_answers_and_falls_back_per_pair() -> None:
    tools = [get_catalog().tools[n] for n in ("list_accounts", "get_account_balance", "transfer_funds")]
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        assert request.url.path == "/v1/chat/completions" and body["model"] == "fake-model"
        # answer only one pair, wrongly on purpose: the classifier must trust it; the rest fall back
        return _reply(json.dumps({"pairs": [{"a": "get_account_balance", "b": "transfer_funds", "relation": "implicit"}]}))

    clf = LLMClassifier(CFG, transport=httpx.MockTransport(handler))
    edges = clf.classify_domain(tools)
    assert seen and clf.classifier_id == "llm:fake-model"
    assert edges[("get_account_balance", "transfer_funds")]["relation"] == IMPLICIT
    assert edges[("list_accounts", "transfer_funds")] == classify_pair(tools[0], tools[2])
    assert edges[("list_accounts", "transfer_funds")]["relation"] == EXPLICIT


def test_teacher_keeps_values_or_falls_back() -> None:
    replies = iter(["Hey, move $50 from ACC-0001 please!", "Move some money please."])
    teacher = LLMTeacher(CFG, transport=httpx.MockTransport(lambda r: _reply(next(replies))))
    original = "Transfer $50 from ACC-0001."
    assert teacher.paraphrase(original, ["ACC-0001", "50"], "casual") == "Hey, move $50 from ACC-0001 please!"
    assert teacher.paraphrase(original, ["ACC-0001", "50"], "casual") == original  # dropped a value: rejected
