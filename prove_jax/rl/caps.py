"""Transcript caps: how many tokens an episode may hold, derived once from the gold transcripts.

A run may fix the cap (``episode.max_tokens``); otherwise it is the longest gold transcript of the
train split times a margin, rounded up to the engine's prefill chunk and bounded by the limit and
the model's context. The gold transcripts are the SFT stage's own live replays (the same driver
and servers), so the cap fits what the model will actually see; a GRPO-only run replays them for
this alone. The result is cached in the run's ``caps.json`` so every later stage and every
resumed launch uses the same numbers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prove_jax.chat import ChatTemplate, ChatTokenizer
from prove_jax.env import EpisodeConfig, MCPPool
from prove_jax.io_util import read_json, write_json
from prove_jax.records import Example, Rollout
from prove_jax.rl.sft import gold_rollouts

UNCAPPED = 10**9
"""``max_tokens`` of a replay that measures transcripts: none is cut short."""
GOLD_LIMIT = 2000
"""Train examples replayed to derive the caps when no SFT replay is at hand."""


@dataclasses.dataclass(frozen=True)
class CapsPolicy:
    """How the caps are chosen (the launch config's ``episode`` and ``engine`` knobs)."""

    max_tokens: int | None = None
    """A fixed transcript cap; None derives it from the gold transcripts."""
    engine_max_len: int | None = None
    """The engine's ``max_len`` (None: the transcript cap)."""
    length_margin: float = 1.25
    max_tokens_limit: int = 32768
    chunk: int = 256
    """The engine's longest prefill chunk: a derived cap is a multiple of it."""


@dataclasses.dataclass(frozen=True)
class TranscriptCaps:
    """The episode token cap and the engine's ``max_len`` (as written to ``caps.json``)."""

    max_tokens: int
    max_len: int
    derived: int
    """1 when derived from gold transcripts (then the gold figures are set), 0 when fixed."""
    gold_longest: int | None = None
    gold_median: int | None = None
    gold_p90: int | None = None
    gold_transcripts: int | None = None

    def to_json(self) -> dict[str, int]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TranscriptCaps:
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})


def derive_caps(gold_lengths: Sequence[int], policy: CapsPolicy, max_position: int) -> TranscriptCaps:
    """The cap from gold transcript lengths: longest x margin, up to a whole chunk, then bounded
    by ``max_tokens_limit`` and the model's ``max_position`` (the engine's ``max_len`` is at least it)."""
    longest = int(max(gold_lengths))
    cap = math.ceil(longest * policy.length_margin / policy.chunk) * policy.chunk
    cap = min(cap, policy.max_tokens_limit, max_position)
    return TranscriptCaps(max_tokens=cap, max_len=max(policy.engine_max_len or cap, cap), derived=1,
                          gold_longest=longest, gold_median=int(np.median(gold_lengths)),
                          gold_p90=int(np.percentile(gold_lengths, 90)), gold_transcripts=len(gold_lengths))


def transcript_caps(path: Path, policy: CapsPolicy, *, gold_lengths: Callable[[], Sequence[int]],
                    max_position: Callable[[], int]) -> TranscriptCaps:
    """The fixed caps, else those cached at ``path``, else derived now and cached (process 0
    writes; every process derives the same). ``gold_lengths`` and ``max_position`` are called
    only when deriving: a replay and a model config are not needed otherwise."""
    if policy.max_tokens is not None:
        return TranscriptCaps(max_tokens=policy.max_tokens, max_len=policy.engine_max_len or policy.max_tokens,
                              derived=0)
    if path.exists():
        return TranscriptCaps.from_json(read_json(path))
    caps = derive_caps(gold_lengths(), policy, max_position())
    write_json(path, caps.to_json())
    return caps


def completed_lengths(rollouts: Sequence[Rollout]) -> list[int]:
    """Token counts of the transcripts that did not fail (a failed replay says nothing of length)."""
    return [len(r.tokens) for r in rollouts if not r.failed]


def measure_gold_lengths(examples: Sequence[Example], pool: Callable[[], MCPPool],
                         template: ChatTemplate, tokenizer: ChatTokenizer, config: EpisodeConfig) -> list[int]:
    """Replay ``examples``' gold calls live (uncapped, in a pool opened for it) and return the
    completed transcripts' lengths: what :func:`transcript_caps` derives from without an SFT replay."""
    uncapped = dataclasses.replace(config, max_tokens=UNCAPPED)

    async def go() -> list[int]:
        async with pool() as opened:
            return completed_lengths(await gold_rollouts(examples, opened, template, tokenizer, uncapped))

    return asyncio.run(go())
