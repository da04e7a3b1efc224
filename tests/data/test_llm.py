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


def _agent_endpoint(script: list[list[dict] | str]) -> httpx.MockTransport:
    """An OpenAI-compatible endpoint that answers from ``script``: a list of tool calls or a reply,
    one entry per assistant message (paraphrase requests get the text back unchanged)."""
    queue = list(script)

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if "tools" not in body:  # the paraphrase step
            return _reply(json.loads(body["messages"][1]["content"])["message"])
        assert body["tools"] and body["messages"][0]["role"] == "system"
        item = queue.pop(0)
        if isinstance(item, str):
            return _reply(item)
        calls = [{"id": f"c{i}", "type": "function",
                  "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}} for i, c in enumerate(item)]
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": "",
                                                                  "tool_calls": calls}}]})

    return httpx.MockTransport(handler)


def _draft(examples: list[dict]) -> tuple[dict, dict]:
    """A plain conversation, and a write of it that changes nothing when made a second time."""
    import copy

    from data.validate import Validator

    validator = Validator(get_catalog())
    for e in examples:
        if e["kind"] != "conversation" or e["meta"]["failure"] or not all(t["gold"] for t in e["turns"]):
            continue
        last = e["turns"][-1]["gold"][-1]["calls"][-1]
        if get_catalog().tools[last["name"]].read_only:
            continue
        twice = copy.deepcopy(e)
        twice["turns"][-1]["gold"][-1]["calls"].append(copy.deepcopy(last))
        if validator.replay(twice, "probe").noops:
            return e, last
    raise AssertionError("no conversation ends in a write that a repeat leaves unchanged")


def test_agent_teacher_makes_the_calls_and_writes_the_replies(examples: list[dict]) -> None:
    """The teacher's calls run on live sessions and become the gold; its text becomes the reply; the
    validator then gates the record exactly as it gates the programmatic teacher's."""
    from data.teacher import AgentTeacher
    from data.validate import Validator

    draft, last = _draft(examples)
    script: list[list[dict] | str] = []
    for i, t in enumerate(draft["turns"]):
        script += [[{"name": c["name"], "arguments": c["arguments"]} for c in g["calls"]] for g in t["gold"]]
        script.append(f"All done with part {i + 1}.")
    teacher = AgentTeacher(CFG, get_catalog(), transport=_agent_endpoint(script))
    out = teacher.rewrite(draft, "casual", "t1")
    assert out["meta"]["teacher"] == "llm:fake-model" and draft["meta"]["teacher"] == "programmatic"
    assert [t["reply"] for t in out["turns"]] == [f"All done with part {i + 1}." for i in range(len(draft["turns"]))]
    assert [c for t in out["turns"] for g in t["gold"] for c in g["calls"]] == \
        [{"name": c["name"], "arguments": c["arguments"]} for t in draft["turns"] for g in t["gold"] for c in g["calls"]]
    assert Validator(get_catalog()).check(out, "teacher-ok") is None
    # a teacher that repeats its last write makes a no-op: the gate rejects the record
    script2 = [*script[:-1], [{"name": last["name"], "arguments": last["arguments"]}], script[-1]]
    again = AgentTeacher(CFG, get_catalog(), transport=_agent_endpoint(script2)).rewrite(draft, "casual", "t2")
    assert again["meta"]["teacher"] == "llm:fake-model"
    assert Validator(get_catalog()).check(again, "teacher-twice") == "noop_gold_call"


def test_agent_teacher_falls_back_to_the_draft_on_a_bad_endpoint(examples: list[dict]) -> None:
    from data.teacher import AgentTeacher

    draft, _ = _draft(examples)
    unknown = AgentTeacher(CFG, get_catalog(), transport=_agent_endpoint([[{"name": "rm_rf", "arguments": {}}]]))
    assert unknown.rewrite(draft, "terse", "t3") is draft
    down = AgentTeacher(CFG, get_catalog(), transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    assert down.rewrite(draft, "terse", "t4") is draft
