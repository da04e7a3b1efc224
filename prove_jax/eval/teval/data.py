"""Reading T-Eval's official data files from a directory the user gives.

T-Eval (open-compass/T-Eval) ships one JSON file per ability and answer format; each is a dict
from sample id to ``{"origin_prompt": [{role, content}...], "ground_truth": ..., "meta_data" or
"meta": {...}, "template": ...}``. The data never ships with us and is never downloaded: the user
points ``--data DIR`` at their copy. Every structural rule a scorer relies on is checked here, once,
so a broken file fails with the file and the sample id instead of a ``KeyError`` deep in scoring.

The English v2 files and the key each one has in T-Eval's own result JSON (which ``convert_results``
reads) are listed in :data:`FILES`; ``--subset`` picks the ``*_v2_subset.json`` variants that
T-Eval's ``test_all_en.sh`` evaluates.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROLES = ("system", "user", "assistant", "function")
INSTRUCT_JSON_KEYS = ("thought", "action", "args")
INSTRUCT_STR_KEYS = ("thought_start", "thought_end", "action_start", "action_end", "args_start", "args_end")


class TevalDataError(ValueError):
    """A T-Eval file does not have the structure the official evaluators assume."""


@dataclasses.dataclass(frozen=True)
class FileSpec:
    """One official file: ``key`` is its entry in T-Eval's result JSON, ``stem`` names the file.

    ``scorer`` picks the evaluator (instruct / plan / rru / review), ``fmt`` the answer format the
    official run script passes as ``--prompt_type`` (``mixed`` for instruct, whose samples say their
    own format), ``eval_type`` the reason/retrieve/understand evaluator's ``--eval`` value.
    """

    key: str
    stem: str
    scorer: str
    fmt: str
    eval_type: str | None = None

    def filename(self, subset: bool) -> str:
        return f"{self.stem}_v2{'_subset' if subset else ''}.json"


FILES: tuple[FileSpec, ...] = (
    FileSpec("instruct_json", "instruct", "instruct", "mixed"),
    FileSpec("plan_json", "plan_json", "plan", "json"),
    FileSpec("plan_str", "plan_str", "plan", "str"),
    FileSpec("rru_json", "reason_retrieve_understand_json", "rru", "json", "rru"),
    FileSpec("reason_str", "reason_str", "rru", "str", "reason"),
    FileSpec("retrieve_str", "retrieve_str", "rru", "str", "retrieve"),
    FileSpec("understand_str", "understand_str", "rru", "str", "understand"),
    FileSpec("review_str", "review_str", "review", "str"),
)
SPEC_BY_KEY: dict[str, FileSpec] = {s.key: s for s in FILES}


@dataclasses.dataclass(frozen=True)
class Sample:
    """One validated sample; ``meta`` is ``meta_data`` (or the plan files' ``meta``) or ``{}``."""

    id: str
    origin_prompt: list[dict[str, str]]
    ground_truth: Any
    meta: dict[str, Any]
    template: Any = None


@dataclasses.dataclass(frozen=True)
class TevalFile:
    spec: FileSpec
    path: str
    samples: list[Sample]


def _fail(source: str, sid: str | None, msg: str) -> TevalDataError:
    where = f"{source}: sample {sid!r}" if sid is not None else source
    return TevalDataError(f"{where}: {msg}")


def _prompt(source: str, sid: str, raw: Any) -> list[dict[str, str]]:
    if isinstance(raw, str):  # OpenCompass's loader accepts a JSON-encoded list too
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise _fail(source, sid, f"origin_prompt is a string but not JSON ({e})") from None
    if not isinstance(raw, list) or not raw:
        raise _fail(source, sid, "origin_prompt must be a non-empty list of {role, content} messages")
    out = []
    for i, msg in enumerate(raw):
        if not isinstance(msg, Mapping) or "role" not in msg or "content" not in msg:
            raise _fail(source, sid, f"origin_prompt[{i}] must be a dict with 'role' and 'content'")
        if msg["role"] not in ROLES:
            raise _fail(source, sid, f"origin_prompt[{i}] has role {msg['role']!r}; T-Eval uses {ROLES}")
        if not isinstance(msg["content"], str):
            raise _fail(source, sid, f"origin_prompt[{i}].content must be a string")
        out.append({"role": str(msg["role"]), "content": msg["content"]})
    return out


def _check_instruct(source: str, sid: str, gt: Any, meta: Mapping[str, Any], template: Any) -> None:
    fmt = meta.get("response_format")
    if not isinstance(fmt, str):
        raise _fail(source, sid, "meta_data.response_format (json or string) is required for instruct")
    keys = INSTRUCT_JSON_KEYS if fmt == "json" else INSTRUCT_STR_KEYS
    if not isinstance(template, Mapping) or any(not isinstance(template.get(k), str) for k in keys):
        raise _fail(source, sid, f"template must give string values for {keys} ({fmt} format)")
    if not isinstance(gt, Mapping) or "action" not in gt or not isinstance(gt.get("args"), Mapping):
        raise _fail(source, sid, "ground_truth must be {'action': ..., 'args': {...}}")


def _check(spec: FileSpec, source: str, sid: str, gt: Any, meta: Mapping[str, Any], template: Any) -> None:
    if spec.scorer == "instruct":
        _check_instruct(source, sid, gt, meta, template)
    elif spec.scorer == "plan":
        fmt = meta.get("prompt_type", spec.fmt)
        if fmt not in ("json", "str"):
            raise _fail(source, sid, f"plan prompt_type {fmt!r} is not supported (json or str; ReWOO is deprecated)")
        api = meta.get("API_list")
        if fmt == "str" and (not isinstance(api, list) or not all(isinstance(a, str) for a in api)):
            raise _fail(source, sid, "meta.API_list (list of API names) is required for the str plan format")
    elif spec.scorer == "review":
        if not isinstance(gt, Mapping) or not isinstance(gt.get("answer"), str):
            raise _fail(source, sid, "ground_truth must be {'answer': 'A'..'E', ...}")
        if meta.get("response_format", "str") != "str":
            raise _fail(source, sid, "only the str review format is scored (as in T-Eval's summary)")
    elif spec.scorer == "rru":
        fmt = meta.get("response_format", spec.fmt)
        if fmt not in ("json", "str"):
            raise _fail(source, sid, f"meta_data.response_format {fmt!r} is not json or str")


def parse_file(spec: FileSpec, data: Any, *, source: str, limit: int | None = None) -> TevalFile:
    """Validate one file's decoded JSON; keep the first ``limit`` samples in file order (as T-Eval's
    ``--test_num`` does)."""
    if not isinstance(data, Mapping):
        raise _fail(source, None, "expected a JSON object mapping sample id to sample")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    samples = []
    for sid, raw in list(data.items())[:limit]:
        sid = str(sid)
        if not isinstance(raw, Mapping):
            raise _fail(source, sid, "sample must be an object")
        if "ground_truth" not in raw:
            raise _fail(source, sid, "ground_truth is missing")
        # plan files keep their format and API list under "meta"; the others under "meta_data"
        first, second = ("meta", "meta_data") if spec.scorer == "plan" else ("meta_data", "meta")
        meta = raw.get(first, raw.get(second)) or {}
        if not isinstance(meta, Mapping):
            raise _fail(source, sid, "meta_data/meta must be an object")
        prompt = _prompt(source, sid, raw.get("origin_prompt"))
        _check(spec, source, sid, raw["ground_truth"], meta, raw.get("template"))
        samples.append(Sample(sid, prompt, raw["ground_truth"], dict(meta), raw.get("template")))
    return TevalFile(spec, source, samples)


def discover(data_dir: str | Path, *, subset: bool = False) -> dict[str, Path]:
    """The official files present in ``data_dir`` (result key -> path); at least one must exist."""
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"T-Eval data directory {root} does not exist (download T-Eval's data yourself; "
                                "we never fetch it)")
    found = {s.key: root / s.filename(subset) for s in FILES if (root / s.filename(subset)).is_file()}
    if not found:
        names = ", ".join(s.filename(subset) for s in FILES)
        raise FileNotFoundError(f"no T-Eval files in {root}; expected some of: {names}")
    return found


def load_teval(data_dir: str | Path, *, subset: bool = False, limit: int | None = None) -> list[TevalFile]:
    """Load and validate every official file present in ``data_dir`` (in :data:`FILES` order)."""
    out = []
    for key, path in discover(data_dir, subset=subset).items():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise _fail(path.name, None, f"not valid JSON ({e})") from None
        out.append(parse_file(SPEC_BY_KEY[key], data, source=path.name, limit=limit))
    return out


def chat_messages(origin_prompt: Sequence[Mapping[str, str]], *, merge_same_role: bool = False) -> list[dict[str, str]]:
    """T-Eval's conversation as OpenAI chat messages.

    Tool results have role ``function``; every meta template T-Eval ships for chat models (qwen,
    chatglm, vicuna, baichuan, llama2) renders them as a user turn, and OpenAI's ``tool`` role would
    need call ids the data does not have, so they become ``user``. System, user and assistant pass
    through. ``merge_same_role`` joins consecutive same-role turns with a newline, as lagent's API
    template parser does, for servers whose templates demand strict alternation; it is off by default
    because the HF path T-Eval reports (meta templates) keeps each turn as its own block.
    """
    out: list[dict[str, str]] = []
    for msg in origin_prompt:
        role = "user" if msg["role"] == "function" else msg["role"]
        if merge_same_role and out and out[-1]["role"] == role:
            out[-1] = {"role": role, "content": out[-1]["content"] + "\n" + msg["content"]}
        else:
            out.append({"role": role, "content": msg["content"]})
    return out


_CUT_MARKERS = ("<eoa>", "<TOKENS_UNUSED_1>", "<|im_end|>", "\nuser", "\nassistant", "\nUSER", "[INST]", "<|user|>")


def clean_prediction(text: str) -> str:
    """What T-Eval's ``test.py`` stores as the prediction: the reply cut at the first end-of-turn or
    next-speaker marker it knows, stripped, with a leading json code fence and backticks removed."""
    for marker in _CUT_MARKERS:
        text = text.split(marker, 1)[0]
    text = text.strip()
    if text.startswith("```json"):
        text = text[len("```json"):]
    return text.strip("`").strip()
