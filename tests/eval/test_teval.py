"""T-Eval scorers, data reading, the real embedder and the end-to-end runner.

Every expected number below is computed by hand in the comment next to it from fixtures written here
in T-Eval's file format (our own samples, not T-Eval's data). Similarity-scored abilities (plan,
reason) use :class:`DictEmbedder`, whose vectors are chosen so each cosine is a round number; it
raises on any text it was not given, so a scorer embedding the wrong string fails loudly.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prove_jax.eval.teval import (
    TevalDataError,
    build_embedder,
    chat_messages,
    clean_prediction,
    load_teval,
    parse_file,
    run_teval,
    score_instruct,
    score_plan,
    score_review,
    score_rru,
    summarize,
)
from prove_jax.eval.teval.data import SPEC_BY_KEY
from prove_jax.eval.teval.parse import load_loose, plan_steps_json
from prove_jax.eval.teval.scorers import max_weight_matching, ordered_match_count, plan_sample_scores
from prove_jax.serve.protocol import ChatReply

E = np.eye(8)
R75 = math.sqrt(0.75)


class DictEmbedder:
    """Hand-chosen vectors by text; unknown text is a test bug and raises KeyError."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.stack([self.table[t] for t in texts])


VECTORS: dict[str, np.ndarray] = {
    # plan: API names are orthonormal; each gold args string has its own axis
    "A.search": E[0], "B.book": E[1], "C.pay": E[2],
    "{'city': 'Paris'}": E[3], "{'room': 1}": E[4], "{'card': 'x'}": E[5], "{'city': 'Lyon'}": E[6],
    # str plans: a sentence stands in for the args; these point the same way as the gold args
    "Use A.search for the hotel": E[3], "Then B.book the room": E[4],
    "Book with B.book after A.search": E[4], "Pay with C.pay": E[5],
    # thoughts
    "find a hotel": E[0], "look for hotels": 0.8 * E[0] + 0.6 * E[1],          # cos 0.8
    "pay the bill": E[2], "cancel everything": -0.5 * E[2] + R75 * E[3],      # cos -0.5 -> clipped 0
    "book now": 0.5 * E[0] + R75 * E[7],                                      # cos 0.5 with "find a hotel"
    "done": E[6],
}

SYSTEM = {"role": "system", "content": "You can use tools."}
T_JSON = {"thought": "goal", "action": "name", "args": "args"}
T_STR = {"thought_start": "goal:", "thought_end": "\n", "action_start": "name:", "action_end": "\n",
         "args_start": "args:", "args_end": ""}
GT_I2 = {"action": "A.search", "args": {"city": "Paris", "n": 2}}
GT_I1 = {"action": "A.search", "args": {"city": "Paris"}}
PLAN_GT = [{"id": 0, "name": "A.search", "args": {"city": "Paris"}}, {"id": 1, "name": "B.book", "args": {"room": 1}},
           {"id": 2, "name": "C.pay", "args": {"card": "x"}}]
API = ["A.search", "B.book", "C.pay"]
RRU_GT = {"thought": "find a hotel", "name": "A.search", "args": {"city": "Paris", "n": "3"}}
FIN_GT = {"thought": "done", "name": "FinishAction", "args": {}}
TOOL_RESULT = {"role": "function", "content": "{'hotels': ['H1']}"}


def _plan(*steps: tuple[int, str, dict[str, Any]]) -> str:
    return json.dumps([{"id": i, "name": n, "args": a} for i, n, a in steps])


# key -> [(sample id, ground truth, meta, template, prediction)]
CASES: dict[str, list[tuple[str, Any, dict[str, Any], Any, str]]] = {
    "instruct_json": [
        ("i1", GT_I2, {"response_format": "json"}, T_JSON,
         '{"goal": "g", "name": "A.search", "args": {"city": "Paris", "n": 2}}'),      # parsed, em 3/3
        ("i2", GT_I2, {"response_format": "json"}, T_JSON,
         "{'goal': 'g', 'name': 'A.search', 'args': {'city': 'Rome'}}"),              # parsed, em 1/3
        ("i3", GT_I2, {"response_format": "json"}, T_JSON, '{"goal": "g", "name": "A.search"}'),  # no args key
        ("i4", GT_I2, {"response_format": "json"}, T_JSON, "Sure! I will call A.search."),  # not json
        ("i5", GT_I2, {"response_format": "string"}, T_STR,
         "goal: find\nname: A.search\nargs: {'city': 'Paris', 'n': 2}"),                  # parsed, em 3/3
        ("i6", GT_I1, {"response_format": "string"}, T_STR,
         'goal: find\nname: A.search\nargs: {"city": "Paris", "ok": true}'),  # args not a literal -> {}, em 1/2
        ("i7", GT_I1, {"response_format": "string"}, T_STR, "name: A.search\nargs: {}"),  # no "goal:" -> unparsed
    ],
    "plan_json": [
        ("p1", PLAN_GT, {"prompt_type": "json"}, None,
         _plan((0, "A.search", {"city": "Paris"}), (1, "B.book", {"room": 1}), (2, "C.pay", {"card": "x"}))),
        ("p2", PLAN_GT, {"prompt_type": "json"}, None,
         _plan((0, "B.book", {"room": 1}), (1, "A.search", {"city": "Paris"}), (2, "C.pay", {"card": "x"}))),
        ("p3", PLAN_GT, {"prompt_type": "json"}, None,
         _plan((0, "A.search", {"city": "Lyon"}), (1, "B.book", {"room": 1}))),
        ("p4", PLAN_GT, {"prompt_type": "json"}, None, "First search, then book."),
        ("p5", PLAN_GT, {"prompt_type": "json"}, None,
         _plan((3, "FinishAction", {}), (2, "C.pay", {"card": "x"}), (0, "A.search", {"city": "Paris"}),
               (1, "B.book", {"room": 1}))),
    ],
    "plan_str": [
        ("s1", PLAN_GT[:2], {"prompt_type": "str", "API_list": API}, None,
         "Use A.search for the hotel. Then B.book the room"),
        ("s2", PLAN_GT[1:], {"prompt_type": "str", "API_list": API}, None,
         "Here is my plan:\nBook with B.book after A.search. Pay with C.pay"),
        ("s3", PLAN_GT[:1], {"prompt_type": "str", "API_list": API}, None, "I cannot help with that."),
    ],
    "rru_json": [
        ("j1", RRU_GT, {"response_format": "json"}, None,
         '{"thought": "find a hotel", "name": "A.search", "args": {"city": "Paris", "n": 3}}'),
        ("j2", RRU_GT, {"response_format": "json"}, None,
         '```json\n{"thought": "book now", "name": "B.book", "args": {"city": "Rome"}}\n```'),
        ("j3", RRU_GT, {"response_format": "json"}, None, "call A.search"),
        ("j4", FIN_GT, {"response_format": "json"}, None, "{'thought': 'done', 'name': 'FinishAction', 'args': {}}"),
        ("j5", FIN_GT, {"response_format": "json"}, None,
         '{"thought": "done", "name": "FinishAction", "args": {"answer": 1}}'),
    ],
    "reason_str": [
        ("r1", {"thought": "find a hotel", "name": "A.search", "args": {}}, {"response_format": "str"}, None,
         "look for hotels"),
        ("r2", {"thought": "pay the bill", "name": "C.pay", "args": {}}, {"response_format": "str"}, None,
         "cancel everything"),
    ],
    "retrieve_str": [
        ("t1", {"name": "A.search"}, {"response_format": "str"}, None, "A.search"),
        ("t2", {"name": "A.search"}, {"response_format": "str"}, None, "I would call A.search now"),
        ("t3", {"name": "A.search"}, {"response_format": "str"}, None, "A.search or B.book"),
        ("t4", {"name": "A.search"}, {"response_format": "str"}, None, "Use A.search, e.g. for hotels"),
        ("t5", {"name": "A.search"}, {"response_format": "str"}, None, ""),
        ("t6", {"name": "FinishAction"}, {"response_format": "str"}, None, "FinishAction"),
    ],
    "understand_str": [
        ("u1", {"args": "Paris"}, {"response_format": "str"}, None, "'Paris'"),
        ("u2", {"args": "Paris"}, {"response_format": "str"}, None, "Paris, France"),
        ("u3", {"args": "Paris"}, {"response_format": "str"}, None, '"Paris"'),
    ],
    "review_str": [
        ("v1", {"answer": "A"}, {"response_format": "str"}, "", "Answer: A"),
        ("v2", {"answer": "C"}, {"response_format": "str"}, "", "Answer: B (internal error)"),
        ("v3", {"answer": "A"}, {"response_format": "str"}, "", "A"),
        ("v4", {"answer": "B"}, {"response_format": "str"}, "", "Answer: maybe"),
        ("v5", {"answer": "E"}, {"response_format": "str"}, "", "The answer is: E. Because"),
    ],
}


def _prompt(key: str, sid: str) -> str:
    return f"[{key}/{sid}] What is the next step?"


def file_data(key: str) -> dict[str, Any]:
    """A file's JSON in T-Eval's layout; plan files keep their format under "meta" as T-Eval's do."""
    meta_key = "meta" if key.startswith("plan") else "meta_data"
    out = {}
    for sid, gt, meta, template, _ in CASES[key]:
        history = [TOOL_RESULT] if key == "rru_json" else []
        sample = {"origin_prompt": [SYSTEM, *history, {"role": "user", "content": _prompt(key, sid)}],
                  "ground_truth": gt, meta_key: meta}
        if template is not None:
            sample["template"] = template
        out[sid] = sample
    return json.loads(json.dumps(out))  # a fresh copy: tests edit it


def parsed(key: str) -> Any:
    return parse_file(SPEC_BY_KEY[key], file_data(key), source=f"{key}.json").samples


def preds(key: str) -> list[str]:
    return [c[4] for c in CASES[key]]


# ---- instruct ---------------------------------------------------------------------------------
def test_instruct_json_and_string() -> None:
    m = score_instruct(preds("instruct_json"), parsed("instruct_json"))
    # json: parsed i1, i2 of 4 -> 0.5; args em (1 + 1/3 + 0 + 0) / 4 = 0.33333 -> 0.3333 (4 decimals)
    assert m["json_format_metric"] == 0.5
    assert m["json_args_em_metric"] == 0.3333
    # string: parsed i5, i6 of 3 -> 0.6667; em (1 + 1/2 + 0) / 3 = 0.5
    assert m["string_format_metric"] == 0.6667
    assert m["string_args_em_metric"] == 0.5


def test_instruct_format_missing_is_none() -> None:
    samples = parsed("instruct_json")[:4]
    m = score_instruct(preds("instruct_json")[:4], samples)
    assert m["string_format_metric"] is None and m["json_format_metric"] == 0.5


# ---- plan -------------------------------------------------------------------------------------
def test_plan_json() -> None:
    m = score_plan(preds("plan_json"), parsed("plan_json"), DictEmbedder(VECTORS), fmt="json")
    # p1 exact: count 3 -> P=R=F1=1
    # p2 order B,A,C -> gold positions [1,0,2], longest increasing chain 2 -> P=R=F1=2/3
    # p3 A(Lyon) scores .75*1 + .25*0 = .75 <= .8: unmatched; B matches -> count 1, P=1/2, R=1/3, F1=0.4
    # p4 unparsed -> 0, parse 0;  p5 sorted by id, trailing FinishAction dropped -> as p1: 1
    assert m["precision"] == pytest.approx((1 + 2 / 3 + 1 / 2 + 0 + 1) / 5)
    assert m["recall"] == pytest.approx((1 + 2 / 3 + 1 / 3 + 0 + 1) / 5)
    assert m["f1_score"] == pytest.approx((1 + 2 / 3 + 0.4 + 0 + 1) / 5)
    assert m["parse_rate"] == pytest.approx(0.8)


def test_plan_str() -> None:
    m = score_plan(preds("plan_str"), parsed("plan_str"), DictEmbedder(VECTORS), fmt="str")
    # s1: two sentences -> A, B, each matching its gold step exactly -> F1 1
    # s2: the first line names no API (dropped); "Book with B.book after A.search" -> B.book (named
    #     first), so [B, C] matches the gold [B, C] -> F1 1 (picking A.search would give 0.5)
    # s3: no API named -> unparsed -> 0
    assert m["f1_score"] == pytest.approx(2 / 3)
    assert m["parse_rate"] == pytest.approx(2 / 3)


def _steps(key: str, sid: str) -> list[dict[str, Any]]:
    return plan_steps_json(next(c[4] for c in CASES[key] if c[0] == sid))


def test_plan_order_matters() -> None:
    """Deleting the increasing-order rule would score p2 (right steps, wrong order) like p1."""
    table = {k: v / np.linalg.norm(v) for k, v in VECTORS.items()}
    gold = plan_steps_json(PLAN_GT)
    right = plan_sample_scores(_steps("plan_json", "p1"), gold, table)["f1_score"]
    wrong = plan_sample_scores(_steps("plan_json", "p2"), gold, table)["f1_score"]
    assert right == 1.0 and wrong == pytest.approx(2 / 3)
    assert ordered_match_count([1, 0, 2]) == 2 and ordered_match_count([0, 1, 2]) == 3


def test_plan_threshold_matters() -> None:
    table = {k: v / np.linalg.norm(v) for k, v in VECTORS.items()}
    gold, p3 = plan_steps_json(PLAN_GT), _steps("plan_json", "p3")
    # at 0.8: A(Lyon)=0.75 unmatched -> count 1 -> F1 0.4; at 0.7 it matches gold A -> count 2,
    # P = 2/2, R = 2/3 -> F1 0.8
    assert plan_sample_scores(p3, gold, table)["f1_score"] == pytest.approx(0.4)
    assert plan_sample_scores(p3, gold, table, threshold=0.7)["f1_score"] == pytest.approx(0.8)


def test_plan_unmatched_plan_still_counts_one() -> None:
    """T-Eval's chain count starts every step at 1: a plan matching nothing still has count 1."""
    table = {k: v / np.linalg.norm(v) for k, v in VECTORS.items()}
    pred = [{"id": 0, "name": "C.pay", "args": "{'city': 'Lyon'}"}]  # vs gold A: 0 + 0 -> no edge
    m = plan_sample_scores(pred, plan_steps_json(PLAN_GT[:1]), table)
    assert (m["precision"], m["recall"], m["f1_score"]) == (1.0, 1.0, 1.0)
    assert plan_sample_scores(pred, [{"id": 0, "name": "FinishAction", "args": "{}"}], table)["f1_score"] == 0.0


def test_plan_matching_is_max_weight_not_greedy() -> None:
    # same names (0.75); args cosines p0-g0 .6, p0-g1 .8, p1-g0 0, p1-g1 .4 ->
    # scores p0-g0 .9, p0-g1 .95, p1-g0 .75 (no edge), p1-g1 .85. Greedy takes p0-g1 and strands p1
    # (count 1, F1 0.5); the max-weight matching is {p0-g0, p1-g1} (1.75 > .95): count 2, F1 1.
    table = {"A.search": E[0], "g0": E[3], "g1": E[4], "p0": 0.6 * E[3] + 0.8 * E[4],
             "p1": 0.4 * E[4] + math.sqrt(0.84) * E[5]}
    gold = [{"id": 0, "name": "A.search", "args": "g0"}, {"id": 1, "name": "A.search", "args": "g1"}]
    pred = [{"id": 0, "name": "A.search", "args": "p0"}, {"id": 1, "name": "A.search", "args": "p1"}]
    assert plan_sample_scores(pred, gold, table)["f1_score"] == pytest.approx(1.0)


def test_max_weight_matching_agrees_with_networkx() -> None:
    import networkx as nx

    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = rng.uniform(0.5, 1.0, size=(int(rng.integers(1, 6)), int(rng.integers(1, 6))))
        mapping = max_weight_matching(scores, 0.8)
        assert len({g for g in mapping if g >= 0}) == sum(g >= 0 for g in mapping)  # a matching
        assert all(scores[i, g] > 0.8 for i, g in enumerate(mapping) if g >= 0)
        graph = nx.Graph()
        for i, j in zip(*np.nonzero(scores > 0.8), strict=True):
            graph.add_edge(("p", int(i)), ("g", int(j)), weight=float(scores[i, j]))
        ref = sum(graph.edges[e]["weight"] for e in nx.max_weight_matching(graph))
        ours = sum(scores[i, g] for i, g in enumerate(mapping) if g >= 0)
        assert ours == pytest.approx(ref)


# ---- reason / retrieve / understand -------------------------------------------------------------
def test_reason_str() -> None:
    m = score_rru(preds("reason_str"), parsed("reason_str"), DictEmbedder(VECTORS), fmt="str", eval_type="reason")
    assert m == pytest.approx({"thought": (0.8 + 0.0) / 2, "parse_rate": 1.0})  # cos 0.8; -0.5 clipped to 0


def test_retrieve_str() -> None:
    m = score_rru(preds("retrieve_str"), parsed("retrieve_str"), None, fmt="str", eval_type="retrieve")
    # right: t1, t2 (name inside text), t6; wrong: t3 (names B.book too), t4 ("e.g" looks like a name),
    # t5 (empty) -> 3/6; every str answer counts as parsed
    assert m == pytest.approx({"name": 0.5, "parse_rate": 1.0})


def test_understand_str() -> None:
    m = score_rru(preds("understand_str"), parsed("understand_str"), None, fmt="str", eval_type="understand")
    assert m == pytest.approx({"args": 2 / 3, "parse_rate": 1.0})  # quotes stripped: u1, u3 match


def test_rru_json() -> None:
    m = score_rru(preds("rru_json"), parsed("rru_json"), DictEmbedder(VECTORS), fmt="json", eval_type="rru")
    # thought: j1 1, j2 cos("book now", "find a hotel") .5, j3 unparsed 0, j4 1, j5 1 -> 3.5/5 = .7
    # name: j1, j4, j5 -> 3/5;  parse: 4/5
    # args: j1 2 of 2 as strings (3 == "3") over 2 + 1e-5; j2 0; j3 0; j4 both empty 1; j5 gold empty 0
    assert m["thought"] == pytest.approx(0.7)
    assert m["name"] == pytest.approx(0.6)
    assert m["args"] == pytest.approx((2 / 2.00001 + 1) / 5, abs=1e-12)
    assert m["parse_rate"] == pytest.approx(0.8)


# ---- review -----------------------------------------------------------------------------------
def test_review_str() -> None:
    m = score_review(preds("review_str"), parsed("review_str"))
    # letters: A (right), B (wrong), A (no colon: whole text; right), none ("maybe"), E (right)
    assert m == {"parse_rate": 0.8, "review_quality": 0.6}


# ---- summary and end to end -----------------------------------------------------------------------
# instruct (.5 + .3333)/2 and (.6667 + .5)/2 -> mean .5; plan (2/3 + .61333)/2 = .64;
# reason (.4 + .7)/2; retrieve (.5 + .6)/2; understand (2/3 + (2/2.00001 + 1)/5)/2; review .6
EXPECTED = {"instruct": 50.0, "plan": 64.0, "reason": 55.0, "retrieve": 55.0,
            "understand": 50.0 * (2 / 3 + (2 / 2.00001 + 1) / 5), "review": 60.0}


def test_summarize_follows_convert_results() -> None:
    detail = {"instruct_json": {"json_format_metric": 0.5, "json_args_em_metric": 0.3333,
                                "string_format_metric": 0.6667, "string_args_em_metric": 0.5},
              "plan_str": {"f1_score": 2 / 3}, "plan_json": {"f1_score": 0.92 / 1.5},
              "reason_str": {"thought": 0.4}, "retrieve_str": {"name": 0.5},
              "understand_str": {"args": 2 / 3},
              "rru_json": {"thought": 0.7, "name": 0.6, "args": (2 / 2.00001 + 1) / 5},
              "review_str": {"review_quality": 0.6}}
    s = summarize(detail)
    for ability, value in EXPECTED.items():
        assert s[ability] == pytest.approx(value), ability
    assert s["overall"] == pytest.approx(sum(EXPECTED.values()) / 6)
    del detail["review_str"]
    partial = summarize(detail)
    assert partial["review"] is None and partial["overall"] is None and partial["missing"] == ["review"]


class ScriptedClient:
    """Replies with the fixture prediction for the sample named in the last user turn."""

    def __init__(self, fail: bool = False) -> None:
        self.by_prompt = {_prompt(k, c[0]): c[4] for k, cases in CASES.items() for c in cases}
        self.seen: list[list[dict[str, str]]] = []
        self.fail = fail

    async def chat(self, messages: Any, tools: Any = None, *, max_tokens: int | None = None,
                   temperature: float = 0.0, **_: Any) -> ChatReply:
        if self.fail:
            raise AssertionError("a cached run must not query the policy")
        assert tools is None and temperature == 0.0 and max_tokens == 512
        self.seen.append(list(messages))
        await asyncio.sleep(0)
        pred = self.by_prompt[messages[-1]["content"]]
        if pred == "Answer: A":  # raw text wins over content, and is cut at end-of-turn markers
            return ChatReply(content="Answer: E", tool_calls=[], finish_reason="stop",
                             text="Answer: A<|im_end|>\nuser: thanks")
        return ChatReply(content=pred, tool_calls=[], finish_reason="stop", text=pred)


def write_fixture_dir(root: Path, suffix: str = "_v2") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for key in CASES:
        (root / f"{SPEC_BY_KEY[key].stem}{suffix}.json").write_text(json.dumps(file_data(key)))
    return root


def test_run_teval_end_to_end_and_resume(tmp_path: Path) -> None:
    data, out = write_fixture_dir(tmp_path / "data"), tmp_path / "out"
    client, emb = ScriptedClient(), DictEmbedder(VECTORS)
    result = asyncio.run(run_teval(client, data, out_dir=out, embedder=emb, concurrency=3, progress=False))
    for ability, value in EXPECTED.items():
        assert result[ability] == pytest.approx(value), ability
    assert result["overall"] == pytest.approx(np.mean([result[a] for a in EXPECTED]))
    assert result["overall"] == pytest.approx(sum(EXPECTED.values()) / 6)
    n_total = sum(len(c) for c in CASES.values())
    assert result["n"] == {k: len(c) for k, c in CASES.items()} and result["queried"] == n_total
    assert result["detail"]["plan_json"]["file"] == "plan_json_v2.json"
    assert json.loads((out / "teval.json").read_text())["overall"] == pytest.approx(result["overall"])
    assert len((out / "predictions.jsonl").read_text().splitlines()) == n_total
    # tool results reach the policy as user turns
    rru = next(m for m in client.seen if m[-1]["content"].startswith("[rru_json/"))
    assert [m["role"] for m in rru] == ["system", "user", "user"] and rru[1]["content"] == TOOL_RESULT["content"]

    again = asyncio.run(run_teval(ScriptedClient(fail=True), data, out_dir=out, embedder=emb, progress=False))
    assert again["queried"] == 0 and again["overall"] == pytest.approx(result["overall"])

    # an edited prompt is asked again; the rest stay cached
    edited = file_data("review_str")
    edited["v1"]["origin_prompt"].insert(1, {"role": "user", "content": "context"})
    (data / "review_str_v2.json").write_text(json.dumps(edited))
    third = asyncio.run(run_teval(ScriptedClient(), data, out_dir=out, embedder=emb, progress=False))
    assert third["queried"] == 1 and third["review"] == pytest.approx(60.0)


class FailingClient(ScriptedClient):
    """Raises for the named prompts (all of them if ``None``), like a request over the context."""

    def __init__(self, failing: set[str] | None) -> None:
        super().__init__()
        self.failing = failing

    async def chat(self, messages: Any, tools: Any = None, **kw: Any) -> ChatReply:
        if self.failing is None or messages[-1]["content"] in self.failing:
            raise RuntimeError("prompt longer than the context")
        return await super().chat(messages, tools, **kw)


def test_run_teval_request_errors(tmp_path: Path) -> None:
    data, out, emb = write_fixture_dir(tmp_path / "data"), tmp_path / "out", DictEmbedder(VECTORS)
    client = FailingClient({_prompt("review_str", "v1")})
    result = asyncio.run(run_teval(client, data, out_dir=out, embedder=emb, progress=False))
    # v1 ("Answer: A") becomes an empty answer: review parse 3/5, quality 2/5
    assert result["errors"] == {"review_str": 1} and result["review"] == pytest.approx(40.0)
    assert result["detail"]["review_str"]["parse_rate"] == 0.6
    retry = asyncio.run(run_teval(ScriptedClient(), data, out_dir=out, embedder=emb, progress=False))
    assert retry["queried"] == 1 and retry["errors"] == {} and retry["review"] == pytest.approx(60.0)
    with pytest.raises(RuntimeError, match=f"all {sum(len(c) for c in CASES.values())} T-Eval requests failed"):
        asyncio.run(run_teval(FailingClient(None), data, out_dir=tmp_path / "out2", embedder=emb, progress=False))


# ---- data reading -----------------------------------------------------------------------------
def test_load_subset_and_limit(tmp_path: Path) -> None:
    write_fixture_dir(tmp_path)
    small = {"v1": file_data("review_str")["v1"]}
    (tmp_path / "review_str_v2_subset.json").write_text(json.dumps(small))
    files = load_teval(tmp_path, subset=True)
    assert [(f.spec.key, len(f.samples)) for f in files] == [("review_str", 1)]
    files = load_teval(tmp_path, limit=2)
    assert len(files) == 8 and all(len(f.samples) == min(2, len(CASES[f.spec.key])) for f in files)
    assert [s.id for s in files[0].samples] == ["i1", "i2"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no T-Eval files"):
        load_teval(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_teval(tmp_path / "absent")


def test_validation_names_file_and_sample() -> None:
    data = file_data("instruct_json")
    del data["i2"]["template"]["action"]
    with pytest.raises(TevalDataError, match=r"instruct\.json: sample 'i2': template"):
        parse_file(SPEC_BY_KEY["instruct_json"], data, source="instruct.json")
    data = file_data("plan_str")
    del data["s1"]["meta"]["API_list"]
    with pytest.raises(TevalDataError, match=r"plan_str\.json: sample 's1': meta\.API_list"):
        parse_file(SPEC_BY_KEY["plan_str"], data, source="plan_str.json")
    data = file_data("review_str")
    data["v3"]["origin_prompt"][0]["role"] = "tool"
    with pytest.raises(TevalDataError, match=r"'v3'.*role 'tool'"):
        parse_file(SPEC_BY_KEY["review_str"], data, source="review_str.json")


def test_messages_and_cleanup() -> None:
    prompt = [SYSTEM, {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, TOOL_RESULT,
              {"role": "user", "content": "next?"}]
    assert [m["role"] for m in chat_messages(prompt)] == ["system", "user", "assistant", "user", "user"]
    merged = chat_messages(prompt, merge_same_role=True)
    assert [m["role"] for m in merged] == ["system", "user", "assistant", "user"]
    assert merged[-1]["content"] == TOOL_RESULT["content"] + "\nnext?"
    assert clean_prediction('```json\n{"a": 1}\n```<|im_end|>junk') == '{"a": 1}'
    assert clean_prediction("Answer: B\nuser: more") == "Answer: B"
    assert load_loose("x {'a': 1} y", "{", "}") == {"a": 1}
    with pytest.raises(ValueError):
        load_loose("no braces at all", "{", "}")


# ---- the real embedder --------------------------------------------------------------------------
def _tiny_mpnet(root: Path, max_seq_length: int) -> None:
    import torch
    import transformers

    words = {"find", "a", "hotel", "in", "paris", "book", "the", "room", "pay", "for", "it", "search", "and", "to"}
    vocab = ["<s>", "<pad>", "</s>", "[UNK]", "<mask>", *sorted(words), ",", "."]
    tok = transformers.MPNetTokenizer(vocab={w: i for i, w in enumerate(vocab)})
    tok.save_pretrained(str(root))
    cfg = transformers.MPNetConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=32, max_position_embeddings=64, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    transformers.MPNetModel(cfg).save_pretrained(str(root))
    (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_seq_length}))
    (root / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 16, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}))


def test_real_embedder_is_masked_mean_pool_normalised(tmp_path: Path) -> None:
    _tiny_mpnet(tmp_path, max_seq_length=8)
    import torch
    import transformers

    texts = ["find a hotel in paris", "pay", "book the room for it and search a hotel in paris to pay", ""]
    emb = build_embedder(tmp_path, batch_size=3)  # two batches, each padded differently
    got = emb.embed(texts)

    tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    model = transformers.AutoModel.from_pretrained(str(tmp_path)).eval()
    assert len(tok(texts[2])["input_ids"]) > 8  # the long text really is truncated
    enc = tok(texts, padding=True, truncation=True, max_length=8, return_tensors="pt")
    with torch.no_grad():
        hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    want = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1).numpy()
    assert got.shape == (4, 16)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    unmasked = torch.nn.functional.normalize(hidden.mean(1), dim=1).numpy()
    assert not np.allclose(got[1], unmasked[1], atol=1e-3)  # padding must not leak into the mean


def test_build_embedder_refuses_missing_model(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nothing is fetched"):
        build_embedder(tmp_path / "all-mpnet-base-v2")
