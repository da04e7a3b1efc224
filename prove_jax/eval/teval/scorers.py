"""T-Eval's six scorers and its summary, as pure functions of (predictions, samples[, embedder]).

Each ``score_*`` takes the cleaned prediction strings aligned with a file's samples and returns the
metrics T-Eval's evaluator reports for that file (0-1, same keys), so a detail entry can be compared
line by line with T-Eval's ``<model>_-1.json``. :func:`summarize` then forms the six abilities and
the overall score on the 0-100 scale of T-Eval's tables, as its ``convert_results`` does.

Rules (from T-Eval's evaluators; quirks kept on purpose so numbers stay comparable):

* instruct — per format (``json`` / ``string``): format rate (answer parsed) and argument exact match
  ``(action matches + each gold arg matched) / (n_gold_args + 1)``; missing args compare as ``""``.
  Both rounded to 4 decimals. Ability = mean over the two formats of (format + args_em) / 2.
* plan — steps scored by ``0.75 * cos(names) + 0.25 * cos(args)`` (cosines clipped at 0); pairs
  above 0.8 are edges of a maximum-weight bipartite matching; the matched count is the longest
  chain of predicted steps whose gold positions increase. Quirk kept: an unmatched step still counts
  as a chain of length 1, so any non-empty plan gets a count of at least 1. Precision = count /
  predicted steps, recall = count / gold steps, F1. A trailing ``FinishAction`` is dropped from both.
  Ability = mean F1 of the str and json files.
* reason — cosine (clipped at 0) between the predicted and gold thought.
* retrieve — json: name equals the gold name; str: the gold name appears and no other ``a.b`` name
  or ``FinishAction`` does.
* understand — json: gold args matched one by one as strings over ``n_gold + 1e-5`` (1 if both are
  empty, 0 if only the gold is); str: the answer, stripped of surrounding quotes, equals the gold.
* review — the option letter after the first ``:`` equals the gold letter (4-decimal rounding).

Reason, retrieve and understand are each the mean of their str file and the shared json file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from prove_jax.eval.teval.data import Sample, TevalFile
from prove_jax.eval.teval.embed import Embedder, cosine_matrix, embedding_table
from prove_jax.eval.teval.parse import (
    instruct_format,
    parse_instruct_json,
    parse_instruct_string,
    plan_steps_json,
    plan_steps_str,
    retrieve_str_correct,
    review_choice,
    rru_answer,
)

NAME_WEIGHT, ARGS_WEIGHT, MATCH_THRESHOLD = 0.75, 0.25, 0.8
ABILITIES = ("instruct", "plan", "reason", "retrieve", "understand", "review")


def _round4(values: Sequence[float]) -> float | None:
    return float(np.round(np.mean(values), 4)) if values else None


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def _aligned(preds: Sequence[str], samples: Sequence[Sample]) -> None:
    if len(preds) != len(samples):
        raise ValueError(f"{len(preds)} predictions for {len(samples)} samples")


# ---- instruct ---------------------------------------------------------------------------------
def instruct_args_em(gold: Mapping[str, Any], pred: Mapping[str, Any]) -> float:
    """Share of (action name + each gold argument) the prediction reproduces exactly."""
    gold_args, pred_args = gold["args"], pred["args"]
    hits = float(gold["action"] == pred["action"])
    hits += sum(1.0 for k, v in gold_args.items() if pred_args.get(k, "") == v)
    return hits / (len(gold_args) + 1)


def score_instruct(preds: Sequence[str], samples: Sequence[Sample]) -> dict[str, float | None]:
    """``{json,string}_{format,args_em}_metric``; a format with no samples reports None."""
    _aligned(preds, samples)
    fmt_ok: dict[str, list[float]] = {"json": [], "string": []}
    em: dict[str, list[float]] = {"json": [], "string": []}
    for pred, s in zip(preds, samples, strict=True):
        fmt = instruct_format(s.meta)
        parsed = (parse_instruct_json if fmt == "json" else parse_instruct_string)(pred, s.template)
        fmt_ok[fmt].append(0.0 if parsed is None else 1.0)
        em[fmt].append(0.0 if parsed is None else instruct_args_em(s.ground_truth, parsed))
    out: dict[str, float | None] = {}
    for fmt in ("json", "string"):
        out[f"{fmt}_format_metric"] = _round4(fmt_ok[fmt])
        out[f"{fmt}_args_em_metric"] = _round4(em[fmt])
    return out


# ---- plan -------------------------------------------------------------------------------------
def _trim(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps = sorted(steps, key=lambda s: s["id"])
    return steps[:-1] if steps and steps[-1]["name"] == "FinishAction" else steps


def max_weight_matching(scores: np.ndarray, threshold: float) -> list[int]:
    """Gold index matched to each predicted step (-1 if none) by a maximum-weight matching over the
    pairs scoring strictly above ``threshold``. Pairs at or below it weigh 0 in a rectangular
    assignment problem, which has the same optimum as the matching; they are then dropped."""
    from scipy.optimize import linear_sum_assignment

    mapping = [-1] * scores.shape[0]
    if scores.size == 0:
        return mapping
    weights = np.where(scores > threshold, scores, 0.0)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    for r, c in zip(rows, cols, strict=True):
        if weights[r, c] > 0:
            mapping[int(r)] = int(c)
    return mapping


def ordered_match_count(mapping: Sequence[int]) -> int:
    """Longest chain of predicted steps whose matched gold positions strictly increase.

    As in T-Eval, every step starts a chain of length 1 even when it is unmatched, so the result is
    at least 1 for a non-empty plan (only matched steps extend chains)."""
    best = [1] * len(mapping)
    for i, gi in enumerate(mapping):
        if gi < 0:
            continue
        for j in range(i):
            if 0 <= mapping[j] < gi:
                best[i] = max(best[i], best[j] + 1)
    return max(best) if best else 0


def plan_sample_scores(pred: list[dict[str, Any]], gold: list[dict[str, Any]], table: dict[str, np.ndarray], *,
                       name_weight: float = NAME_WEIGHT, args_weight: float = ARGS_WEIGHT,
                       threshold: float = MATCH_THRESHOLD) -> dict[str, float]:
    """Precision / recall / F1 of one predicted plan against the gold plan (steps as parsed)."""
    zero = {"precision": 0.0, "recall": 0.0, "f1_score": 0.0}
    if not pred or not gold:
        return zero
    pred, gold = _trim(pred), _trim(gold)
    if not pred or not gold:  # only a FinishAction: T-Eval would crash here; we score it 0
        return zero
    names = cosine_matrix(table, [s["name"] for s in pred], [s["name"] for s in gold])
    args = cosine_matrix(table, [s["args"] for s in pred], [s["args"] for s in gold])
    count = ordered_match_count(max_weight_matching(name_weight * names + args_weight * args, threshold))
    precision, recall = count / len(pred), count / len(gold)
    return {"precision": precision, "recall": recall, "f1_score": 2 * precision * recall / (precision + recall)}


def plan_texts(steps: list[dict[str, Any]]) -> list[str]:
    return [s["name"] for s in steps] + [s["args"] for s in steps]


def score_plan(preds: Sequence[str], samples: Sequence[Sample], embedder: Embedder, *, fmt: str,
               name_weight: float = NAME_WEIGHT, args_weight: float = ARGS_WEIGHT,
               threshold: float = MATCH_THRESHOLD) -> dict[str, float]:
    """Mean precision / recall / f1_score / parse_rate over a plan file. A sample's own
    ``meta.prompt_type`` picks its answer format, else the file's ``fmt``."""
    _aligned(preds, samples)
    pairs = []
    for pred, s in zip(preds, samples, strict=True):
        gold = plan_steps_json(s.ground_truth)
        if s.meta.get("prompt_type", fmt) == "json":
            steps = plan_steps_json(pred)
        else:
            steps = plan_steps_str(pred, s.meta.get("API_list", []))
        pairs.append((steps, gold))
    table = embedding_table(embedder, [t for p, g in pairs if p and g for t in plan_texts(_trim(p) + _trim(g))])
    rows = []
    for steps, gold in pairs:
        row = plan_sample_scores(steps, gold, table, name_weight=name_weight, args_weight=args_weight,
                                 threshold=threshold)
        row["parse_rate"] = 1.0 if steps and gold else 0.0
        rows.append(row)
    return {k: _mean([r[k] for r in rows]) for k in ("precision", "recall", "f1_score", "parse_rate")}


# ---- reason / retrieve / understand -------------------------------------------------------------
RRU_KEYS = {"rru": ("thought", "name", "args"), "reason": ("thought",), "retrieve": ("name",),
            "understand": ("args",)}


def understand_args_score(gold: Any, pred: Any) -> float:
    """Object gold args: share of gold keys whose value the prediction gives (compared as strings) over
    ``n + 1e-5``; 1 when both are empty, 0 when only the gold is. Text gold args: exact match of the
    answer with surrounding quotes stripped."""
    if isinstance(gold, dict):
        pred = pred if isinstance(pred, dict) else {}
        if not gold:
            return 1.0 if not pred else 0.0
        hits = sum(1 for k, v in gold.items() if k in pred and str(pred[k]) == str(v))
        return hits / (len(gold) + 1e-5)
    return float(str(gold) == str(pred).strip("'").strip('"'))


def score_rru(preds: Sequence[str], samples: Sequence[Sample], embedder: Embedder | None, *, fmt: str,
              eval_type: str) -> dict[str, float]:
    """Reason / retrieve / understand metrics of one file. ``fmt`` (the file's format) decides how
    gold args are read, how names are matched and which metrics are reported; a sample's own
    ``response_format`` decides how its answer is read (json: one parsed step; str: the whole text is
    the thought, the name or the args, whichever this file asks about)."""
    _aligned(preds, samples)
    keys = (*RRU_KEYS["rru" if fmt == "json" else eval_type], "parse_rate")
    rows: list[dict[str, float]] = []
    thoughts: list[tuple[int, str, str]] = []
    for i, (pred, s) in enumerate(zip(preds, samples, strict=True)):
        gold = rru_answer(s.ground_truth, fmt)
        if s.meta.get("response_format", fmt) == "json":
            ans = rru_answer(pred, fmt)
            if not ans or not gold:
                ans = {}
        else:
            field = {"reason": "thought", "retrieve": "name", "understand": "args"}.get(eval_type)
            ans = {field: pred} if field else {}
        row = dict.fromkeys(keys, 0.0)
        row["parse_rate"] = 1.0 if ans else 0.0
        if "thought" in ans and "thought" in gold:
            thoughts.append((i, ans["thought"], gold["thought"]))
        if "name" in ans and "name" in gold:
            ok = ans["name"] == gold["name"] if fmt == "json" else retrieve_str_correct(ans["name"], gold["name"])
            row["name"] = float(ok)
        if "args" in ans and "args" in gold:
            row["args"] = understand_args_score(gold["args"], ans["args"])
        rows.append(row)
    if thoughts:
        if embedder is None:
            raise ValueError("scoring thoughts (reason) needs an embedder")
        table = embedding_table(embedder, [t for _, p, g in thoughts for t in (p, g)])
        for i, p, g in thoughts:
            rows[i]["thought"] = float(cosine_matrix(table, [p], [g])[0, 0])
    return {k: _mean([r.get(k, 0.0) for r in rows]) for k in keys}


# ---- review -----------------------------------------------------------------------------------
def score_review(preds: Sequence[str], samples: Sequence[Sample]) -> dict[str, float | None]:
    """parse_rate (a letter A-E was found) and review_quality (it is the gold letter)."""
    _aligned(preds, samples)
    choices = [review_choice(p) for p in preds]
    return {"parse_rate": _round4([float(c is not None) for c in choices]),
            "review_quality": _round4([float(c is not None and c == s.ground_truth["answer"])
                                       for c, s in zip(choices, samples, strict=True)])}


# ---- files and summary -------------------------------------------------------------------------
def score_file(file: TevalFile, preds: Sequence[str], embedder: Embedder | None) -> dict[str, Any]:
    """The official metrics of one file, dispatched on its spec."""
    spec = file.spec
    if spec.scorer == "instruct":
        return score_instruct(preds, file.samples)
    if spec.scorer == "review":
        return score_review(preds, file.samples)
    if spec.scorer == "plan":
        if embedder is None:
            raise ValueError(f"{file.path}: plan scoring needs an embedder")
        return score_plan(preds, file.samples, embedder, fmt=spec.fmt)
    return score_rru(preds, file.samples, embedder, fmt=spec.fmt, eval_type=spec.eval_type or "rru")


_PARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "plan": (("plan_str", "f1_score"), ("plan_json", "f1_score")),
    "reason": (("reason_str", "thought"), ("rru_json", "thought")),
    "retrieve": (("retrieve_str", "name"), ("rru_json", "name")),
    "understand": (("understand_str", "args"), ("rru_json", "args")),
    "review": (("review_str", "review_quality"),),
}


def _ability_parts(ability: str, detail: Mapping[str, Mapping[str, Any]]) -> list[float]:
    if ability == "instruct":
        m = detail.get("instruct_json", {})
        halves = [(m.get(f"{f}_format_metric"), m.get(f"{f}_args_em_metric")) for f in ("json", "string")]
        return [(a + b) / 2 for a, b in halves if a is not None and b is not None]
    return [float(detail[k][metric]) for k, metric in _PARTS[ability]
            if k in detail and detail[k].get(metric) is not None]


def summarize(detail: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The six abilities and their mean on T-Eval's 0-100 scale. An ability with none of its files
    is None, and so is ``overall`` unless all six are there (a partial mean is not T-Eval's score)."""
    out: dict[str, Any] = {}
    for ability in ABILITIES:
        parts = _ability_parts(ability, detail)
        out[ability] = 100.0 * float(np.mean(parts)) if parts else None
    present = [out[a] for a in ABILITIES if out[a] is not None]
    out["overall"] = float(np.mean(present)) if len(present) == len(ABILITIES) else None
    out["missing"] = [a for a in ABILITIES if out[a] is None]
    return out
