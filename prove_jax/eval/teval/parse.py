"""Reading model answers the way T-Eval's evaluators read them.

Each function here reproduces one official parsing rule (written from the rules, not the code): what
counts as a parsed answer decides each ability's parse rate and which samples score 0, so these are
as lenient or as strict as T-Eval is, quirks included (each quirk is named where it is kept). None of
them raises on model output: anything unreadable comes back as the official "nothing parsed" value.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_FENCE = "```json"


def load_loose(raw: Any, start: str = "", end: str = "") -> Any:
    """T-Eval's lenient loader: Python literal, then JSON, then JSON with ``'`` read as ``"``.

    Non-strings are returned as they are (ground truths are often already decoded). Text after a
    json code fence is used, trailing backticks dropped. With ``start``/``end`` the text is cut from the
    first ``start`` to the last ``end``; like the official slicing, a missing ``start`` keeps only the
    last character and a missing ``end`` keeps nothing, so such text fails to parse.
    Raises ``ValueError`` when nothing parses.
    """
    if not isinstance(raw, str):
        return raw
    text = raw
    if _FENCE in text:
        text = text[text.find(_FENCE) + len(_FENCE):].strip("`")
    if start:
        text = text[text.find(start):]
    if end:
        text = text[: text.rfind(end) + len(end)]
    for attempt in (ast.literal_eval, json.loads, lambda t: json.loads(t.replace("'", '"'))):
        try:
            return attempt(text)
        except Exception:  # literal_eval raises many kinds (SyntaxError, ValueError, RecursionError...)
            continue
    raise ValueError("cannot parse")


# ---- instruct ---------------------------------------------------------------------------------
def instruct_format(sample_meta: Mapping[str, Any]) -> str:
    """``json`` or ``string``: T-Eval's instruct data labels its two formats ``json`` and ``string``
    and its summary reads ``json_*``/``string_*`` metrics; anything but ``json`` is read as string."""
    return "json" if sample_meta.get("response_format") == "json" else "string"


def parse_instruct_json(pred: str, template: Mapping[str, str]) -> dict[str, Any] | None:
    """The answer object's thought/action/args under the template's key names; None when it does not
    load or lacks a key. Args that are not an object count as no args (the answer still parsed)."""
    try:
        data = load_loose(pred)
        out = {"thought": data[template["thought"]], "action": data[template["action"]]}
        args = data[template["args"]]
    except Exception:
        return None
    out["args"] = args if isinstance(args, dict) else {}
    return out


def parse_instruct_string(pred: str, template: Mapping[str, str]) -> dict[str, Any] | None:
    """``<thought_start>T<thought_end><action_start>A<action_end><args_start>ARGS<args_end>``.

    Each slot is a greedy any-text (newlines included) match, as in the official template parser; the
    delimiters are matched literally (the official pattern does not escape them, which is the same
    thing for T-Eval's delimiters, which have no regex metacharacters). ARGS must be a Python literal
    dict, else args are empty but the answer still counts as parsed. The action is stripped.
    """
    keys = ("thought_start", "thought_end", "action_start", "action_end", "args_start", "args_end")
    ts, te, as_, ae, gs, ge = (re.escape(template[k]) for k in keys)
    match = re.search(f"{ts}(.*){te}{as_}(.*){ae}{gs}(.*){ge}", pred, flags=re.S)
    if match is None:
        return None
    thought, action, args_text = match.groups()
    try:
        args = ast.literal_eval(args_text.strip())
    except Exception:
        args = {}
    return {"thought": thought, "action": action.strip(), "args": args if isinstance(args, dict) else {}}


# ---- plan -------------------------------------------------------------------------------------
def plan_steps_json(raw: Any) -> list[dict[str, Any]]:
    """A JSON plan: the list between the first ``[`` and the last ``]``; every step must give a
    ``name``, an integer-convertible ``id`` and ``args`` (kept as ``str(args)``), or the whole plan
    counts as unparsed (``[]``)."""
    try:
        data = load_loose(raw, "[", "]")
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    try:
        return [{"name": str(s["name"]), "id": int(s["id"]), "args": str(s["args"])} for s in data]
    except Exception:
        return []


def plan_steps_str(pred: str, api_list: Sequence[str]) -> list[dict[str, Any]]:
    """A free-text plan: sentences (``". "`` is a break, as is a newline) that mention a known API.

    A sentence's action is the API named earliest in it (ties go to the earlier API in the list); the
    sentence itself stands in for the args. Sentences naming no API are dropped.
    """
    steps: list[dict[str, Any]] = []
    for line in pred.replace(". ", "\n").split("\n"):
        best, best_at = "", None
        for api in api_list:
            at = line.find(api)
            if at != -1 and (best_at is None or at < best_at):
                best, best_at = api, at
        if best:
            steps.append({"name": best, "id": len(steps), "args": line})
    return steps


# ---- reason / retrieve / understand -------------------------------------------------------------
def rru_answer(raw: Any, mode: str) -> dict[str, Any]:
    """One step ``{thought, name, args}`` from the object between the first ``{`` and the last ``}``.

    ``{}`` when nothing loads or it is not an object. Missing thought/name become ``""``; in ``json``
    mode args are kept only if they are an object (else ``{}``), in ``str`` mode they are ``str(args)``
    (``""`` if missing). ``mode`` is the file's format, as the official evaluator's default prompt type.
    """
    try:
        data = load_loose(raw, "{", "}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {
        "thought": str(data["thought"]) if "thought" in data else "",
        "name": str(data["name"]) if "name" in data else "",
    }
    if mode == "json":
        out["args"] = data["args"] if isinstance(data.get("args"), dict) else {}
    else:
        out["args"] = str(data["args"]) if "args" in data else ""
    return out


_DOTTED = re.compile(r"\w+\.\w+")


def retrieve_str_correct(pred: str, gold: str) -> bool:
    """The gold API name appears in the answer and every other ``word.word`` or ``FinishAction`` in it
    is that same name (so ``e.g.`` next to the right name fails, as it does in T-Eval)."""
    if gold not in pred:
        return False
    mentioned = _DOTTED.findall(pred) + re.findall("FinishAction", pred)
    return all(name == gold for name in mentioned)


# ---- review -----------------------------------------------------------------------------------
def review_choice(pred: str) -> str | None:
    """The option letter right after the first ``:`` (the whole answer if there is none), or None
    when that text does not start with A-E."""
    rest = pred[pred.find(":") + 1:].strip()
    return rest[0] if rest and rest[0] in "ABCDE" else None
