"""Running T-Eval against a chat policy: query every sample, cache, score, summarise.

Each sample's ``origin_prompt`` goes to the policy as chat messages (see
:func:`~prove_jax.eval.teval.data.chat_messages`), greedily, with at most ``concurrency`` requests in
flight. T-Eval scores the model's raw response string (its ``test.py`` stores the decoded
generation after cutting it at end-of-turn markers), so we keep :attr:`ChatReply.text`, the raw
decoded turn, and fall back to ``content`` only for clients that leave ``text`` empty: ``content``
has tool-call blocks and reasoning removed, and a policy trained to emit ``<tool_call>`` may well
write T-Eval's JSON answer inside one, which T-Eval's lenient loaders would still read. (Over HTTP
the server has already split reasoning out, so there ``text`` is the content, as T-Eval's API
models see it.) Each raw reply is appended to
``predictions.jsonl`` in ``out_dir`` as it arrives, so an interrupted run resumes where it stopped;
the T-Eval clean-up (:func:`~prove_jax.eval.teval.data.clean_prediction`) is applied at scoring time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from prove_jax.eval.settings import TevalConfig  # noqa: F401 - re-exported
from prove_jax.eval.teval.data import Sample, TevalFile, chat_messages, clean_prediction, load_teval
from prove_jax.eval.teval.embed import Embedder
from prove_jax.eval.teval.scorers import score_file, summarize

if TYPE_CHECKING:  # the protocol module's package pulls in the engine; only the types are needed here
    from prove_jax.serve.protocol import ChatClient, ChatReply

log = logging.getLogger(__name__)
CACHE_NAME, RESULT_NAME = "predictions.jsonl", "teval.json"
# T-Eval generates at most 512 new tokens (lagent's HF and API wrappers both default to it).
MAX_TOKENS = 512


def reply_text(reply: ChatReply) -> str:
    """The raw response string T-Eval would score (see the module docstring)."""
    return reply.text or reply.content or ""


def prompt_digest(messages: list[dict[str, str]]) -> str:
    """Identifies the exact prompt a cached reply answered, so edited data is asked again."""
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def read_cache(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Cached replies by (file key, sample id); a torn last line from a crash is ignored."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
            out[(rec["file"], rec["id"])] = rec
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return out


@dataclasses.dataclass
class Replies:
    """Raw replies by (file key, sample id); ``queried``: asked for in this run; ``errors``: the
    requests that raised (their reply is ``""``, scored like an empty answer, and not cached)."""

    raw: dict[tuple[str, str], str]
    queried: int = 0
    errors: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)


async def query_all(client: ChatClient, files: list[TevalFile], cache_path: Path, *, concurrency: int = 8,
                    max_tokens: int = MAX_TOKENS, merge_same_role: bool = False,
                    progress: bool = True) -> Replies:
    """Raw replies for every sample, asking the policy only for those not cached with the same prompt.

    A request that raises (e.g. a prompt longer than the policy's context) scores as an empty answer
    and is asked again on the next run; if every request of this run raises, that is an outage, not
    an answer, so the first error is raised instead.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    cache = read_cache(cache_path)
    replies: dict[tuple[str, str], str] = {}
    todo: list[tuple[str, Sample, list[dict[str, str]], str]] = []
    for f in files:
        for s in f.samples:
            msgs = chat_messages(s.origin_prompt, merge_same_role=merge_same_role)
            digest, hit = prompt_digest(msgs), cache.get((f.spec.key, s.id))
            if hit is not None and hit.get("prompt") == digest and isinstance(hit.get("raw"), str):
                replies[(f.spec.key, s.id)] = hit["raw"]
            else:
                todo.append((f.spec.key, s, msgs, digest))
    out = Replies(replies, len(todo))
    if not todo:
        return out
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    gate = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(todo), desc="T-Eval", unit="prompt", disable=not progress)
    with cache_path.open("a", encoding="utf-8") as sink:

        async def ask(key: str, s: Sample, msgs: list[dict[str, str]], digest: str) -> None:
            async with gate:
                try:
                    reply = await client.chat(msgs, None, max_tokens=max_tokens, temperature=0.0)
                except Exception as exc:
                    out.errors[(key, s.id)] = f"{type(exc).__name__}: {exc}"
                    replies[(key, s.id)] = ""
                    bar.update(1)
                    return
            raw = reply_text(reply)
            replies[(key, s.id)] = raw
            sink.write(json.dumps({"file": key, "id": s.id, "prompt": digest, "raw": raw}, ensure_ascii=False) + "\n")
            sink.flush()
            bar.update(1)

        try:
            async with asyncio.TaskGroup() as group:
                for item in todo:
                    group.create_task(ask(*item))
        finally:
            bar.close()
    if len(out.errors) == len(todo):
        raise RuntimeError(f"all {len(todo)} T-Eval requests failed; first: {next(iter(out.errors.values()))}")
    for (key, sid), msg in list(out.errors.items())[:3]:
        log.warning("T-Eval %s/%s failed (scored as an empty answer): %s", key, sid, msg)
    return out


def score_all(files: list[TevalFile], replies: Mapping[tuple[str, str], str],
              embedder: Embedder | None) -> dict[str, Any]:
    """Per-file official metrics plus the summary (abilities, overall, sample counts)."""
    detail: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for f in files:
        preds = [clean_prediction(replies[(f.spec.key, s.id)]) for s in f.samples]
        detail[f.spec.key] = {"file": Path(f.path).name, **score_file(f, preds, embedder)}
        counts[f.spec.key] = len(f.samples)
    return {**summarize(detail), "detail": detail, "n": counts}


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


async def run_teval(client: ChatClient, data_dir: str | Path, *, out_dir: str | Path, embedder: Embedder | None,
                    limit: int | None = None, concurrency: int = 8, subset: bool = False,
                    max_tokens: int = MAX_TOKENS, merge_same_role: bool = False,
                    progress: bool = True) -> dict[str, Any]:
    """Evaluate ``client`` on the T-Eval files in ``data_dir`` and write ``out_dir/teval.json``.

    Returns ``{"overall", "instruct", "plan", "reason", "retrieve", "understand", "review"}`` on
    T-Eval's 0-100 scale (None where files are missing; see ``missing``), ``detail`` (each file's
    official metrics, 0-1, keyed as in T-Eval's result JSON), ``n`` (samples per file), ``queried``
    (prompts sent this run; the rest came from the cache) and ``errors`` (per file, requests that
    raised and were scored as empty answers). ``embedder`` may be None only when no plan or reason
    file is present.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = load_teval(data_dir, subset=subset, limit=limit)
    replies = await query_all(client, files, out / CACHE_NAME, concurrency=concurrency, max_tokens=max_tokens,
                              merge_same_role=merge_same_role, progress=progress)
    errors: dict[str, int] = {}
    for key, _ in replies.errors:
        errors[key] = errors.get(key, 0) + 1
    result = {**score_all(files, replies.raw, embedder), "queried": replies.queried, "errors": errors}
    _write_json(out / RESULT_NAME, result)
    return result
