"""GRPO's rollout dump: every step's transcripts, calls, rewards and advantages as JSONL.

Why: the metrics say *that* the reward moved, not *what* the policy did. With the dump a reader
can open step N and see each group's prompt, every sample's calls and what the servers answered,
its reward components and the advantage the update gave it (``python -m prove_jax.inspect``).

Layout: ``<stage_dir>/rollouts/step_<N>.jsonl`` (``N`` the 0-based step, as in ``metrics.jsonl``),
one :class:`RolloutDump` per line, groups in draw order and samples in index order. What a line
holds and what it leaves out, to keep a step small:

* ``transcript`` is the decoded text *after* the opening render (system prompt, tool schemas,
  first user turn: the same for the whole group and mostly schemas); ``prompt`` is that first
  user message, ``opening`` its length in tokens;
* a call's ``result`` is clipped to :data:`RESULT_CHARS` (the record's own field holds the whole
  server text);
* token ids and log-probs are not written.

``reward`` is the raw total (what the metrics' ``reward`` averages), ``components`` the rest of
:func:`prove_jax.rewards.score_rollouts`'s dict (the components plus its bookkeeping, and
``total`` when GDPO normalisation made the advantage's input differ from the raw total);
``advantage`` is ``None`` where the update gave none (a failed episode, a group with fewer than
two live episodes, a dropped constant group, a surplus group dynamic sampling set aside).
``group_status`` says which: ``trained``, ``constant``, ``failed`` or ``surplus``; ``round`` is
the dynamic-sampling refill round that drew the prompt (0: the step's own batch).

Only process 0 writes (:func:`rollout_dumper`): on a multi-process run the dump holds process
0's share of the step's prompts. A resumed run first deletes the files of the steps it will run
again (:meth:`RolloutDumper.start`), so a step's file is always from the run that logged it.

This module imports only the standard library and the records, so the inspect CLI reads dumps
without JAX.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from prove_jax.records import CallRecord, Example, ParseError, Rollout

RESULT_CHARS = 400
"""A call's server result is clipped to this many characters in the dump."""
STATUSES = ("trained", "constant", "failed", "surplus")
_STEP_FILE = re.compile(r"^step_(\d+)\.jsonl$")


class Decoder(Protocol):
    """What the dump needs of a tokenizer (``ChatTokenizer`` is one)."""

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str: ...


@dataclasses.dataclass(frozen=True, slots=True)
class RolloutScore:
    """One rollout's reward dict (as :func:`prove_jax.rewards.score_rollouts` gives it) and the
    advantage the update used (``None``: none). ``rollouts_to_rows`` fills a map of these so the
    dump shows exactly what the step trained on, without scoring twice."""

    scores: dict[str, float]
    advantage: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class RolloutDump:
    """One line of a step's dump (the fields are explained in the module docstring)."""

    step: int
    group_id: str
    example_id: str
    sample_idx: int
    kind: str
    round: int
    group_status: str
    prompt: str
    transcript: str
    calls: tuple[CallRecord, ...]
    parse_errors: tuple[ParseError, ...]
    reward: float | None
    components: dict[str, float]
    advantage: float | None
    finish: str
    failed: bool
    failure: str | None
    n_tokens: int
    n_generated: int
    opening: int
    n_assistant_turns: int
    n_user_turns: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this line (``from_dict(x.to_dict()) == x``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["calls"] = [c.to_dict() for c in self.calls]
        out["parse_errors"] = [e.to_dict() for e in self.parse_errors]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RolloutDump:
        """The line of a JSON object; ``ValueError`` naming the rollout and the field when one is
        missing (a dump from another version, a truncated line)."""
        who = f"RolloutDump {d.get('group_id')!r}#{d.get('sample_idx')}" if isinstance(d, Mapping) else "RolloutDump"
        if not isinstance(d, Mapping):
            raise ValueError(f"{who}: must be a JSON object, got {type(d).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        missing = [n for n in names if n not in d]
        if missing:
            raise ValueError(f"{who}: missing field(s) {', '.join(missing)}")
        values = {n: d[n] for n in names}
        values["calls"] = tuple(CallRecord.from_dict(c, who, f"calls[{i}]") for i, c in enumerate(d["calls"]))
        values["parse_errors"] = tuple(ParseError.from_dict(e, who, f"parse_errors[{i}]")
                                       for i, e in enumerate(d["parse_errors"]))
        values["components"] = {str(k): float(v) for k, v in d["components"].items()}
        if values["group_status"] not in STATUSES:
            raise ValueError(f"{who}: group_status must be one of {', '.join(STATUSES)}, got {values['group_status']!r}")
        return cls(**values)


def clip(text: str, n: int = RESULT_CHARS) -> str:
    """``text`` cut to ``n`` characters, marked when cut (a reader must see it is an excerpt)."""
    return text if len(text) <= n else f"{text[:n]}… [{len(text) - n} more chars]"


def dump_line(step: int, example: Example, rollout: Rollout, score: RolloutScore | None, status: str,
              round_: int, tokenizer: Decoder) -> RolloutDump:
    """The dump line of one rollout (``score`` ``None``: it was not scored)."""
    scores = dict(score.scores) if score is not None else {}
    raw = scores.pop("total_raw", None)
    total = scores.pop("total", None)
    if raw is not None and total is not None:
        scores["total"] = total  # GDPO: the normalised total the advantage came from
    reward = raw if raw is not None else total
    return RolloutDump(
        step=step, group_id=rollout.group_id, example_id=rollout.example_id, sample_idx=rollout.sample_idx,
        kind=rollout.kind, round=round_, group_status=status, prompt=example.turns[0].user,
        transcript=tokenizer.decode([int(t) for t in rollout.tokens[rollout.opening:]]),
        calls=tuple(dataclasses.replace(c, result=clip(c.result)) for c in rollout.calls),
        parse_errors=rollout.parse_errors, reward=None if reward is None else float(reward),
        components={k: float(v) for k, v in scores.items()},
        advantage=None if score is None or score.advantage is None else float(score.advantage),
        finish=rollout.finish, failed=rollout.failed, failure=rollout.failure, n_tokens=len(rollout.tokens),
        n_generated=int(sum(bool(m) for m in rollout.loss_mask)), opening=rollout.opening,
        n_assistant_turns=rollout.n_assistant_turns, n_user_turns=rollout.n_user_turns)


def group_status(rollouts: Sequence[Rollout], scored: Mapping[Rollout, RolloutScore], surplus: bool) -> str:
    """Which of :data:`STATUSES` a group is (what became of it in the update)."""
    if surplus:
        return "surplus"
    live = [r for r in rollouts if not r.failed]
    if len(live) < 2 or any(r not in scored for r in live):
        return "failed"
    return "trained" if any(scored[r].advantage not in (None, 0.0) for r in live) else "constant"


def dump_path(stage_dir: str | Path, step: int) -> Path:
    return Path(stage_dir) / "rollouts" / f"step_{step}.jsonl"


def dumped_steps(stage_dir: str | Path) -> list[int]:
    """The steps that have a dump under ``stage_dir``, ascending."""
    d = Path(stage_dir) / "rollouts"
    if not d.is_dir():
        return []
    return sorted(int(m.group(1)) for p in d.iterdir() if (m := _STEP_FILE.match(p.name)))


def write_dump(path: Path, lines: Sequence[RolloutDump]) -> int:
    """Write ``lines`` atomically (a reader sees the old file or the whole new one); returns bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(x.to_dict(), ensure_ascii=False) + "\n" for x in lines).encode("utf-8")
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return len(data)


def read_dump(path: str | Path) -> list[RolloutDump]:
    """Every line of a dump file as a :class:`RolloutDump` (the counterpart of :func:`write_dump`)."""
    out = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines()):
        if line.strip():
            try:
                out.append(RolloutDump.from_dict(json.loads(line)))
            except (ValueError, TypeError) as e:
                raise ValueError(f"{path}:{i + 1}: {e}") from e
    return out


class RolloutDumper:
    """Writes one file per step under ``<stage_dir>/rollouts`` (see the module docstring)."""

    def __init__(self, stage_dir: str | Path, tokenizer: Decoder) -> None:
        self.stage_dir = Path(stage_dir)
        self.tokenizer = tokenizer
        self.bytes_written = 0

    def start(self, step: int) -> list[int]:
        """Before (re)running from ``step``: delete the dumps of ``step`` and later, which an
        interrupted run may have left; returns the steps deleted."""
        gone = [s for s in dumped_steps(self.stage_dir) if s >= step]
        for s in gone:
            dump_path(self.stage_dir, s).unlink(missing_ok=True)
        return gone

    def lines(self, step: int, examples: Sequence[Example], rollouts: Sequence[Rollout],
              scored: Mapping[Rollout, RolloutScore], *, rounds: Mapping[str, int] | None = None,
              surplus: Sequence[tuple[Example, Sequence[Rollout]]] = ()) -> list[RolloutDump]:
        """The step's lines: the groups of ``examples`` (the trained batch), then ``surplus``."""
        by_group: dict[str, list[Rollout]] = {}
        for r in rollouts:
            by_group.setdefault(r.group_id, []).append(r)
        groups = [(ex, by_group.get(ex.id, []), False) for ex in examples]
        groups += [(ex, list(ros), True) for ex, ros in surplus]
        out = []
        for ex, ros, extra in groups:
            status = group_status(ros, scored, extra)
            rnd = (rounds or {}).get(ex.id, 0)
            out.extend(dump_line(step, ex, r, scored.get(r), status, rnd, self.tokenizer)
                       for r in sorted(ros, key=lambda r: r.sample_idx))
        return out

    def write(self, step: int, examples: Sequence[Example], rollouts: Sequence[Rollout],
              scored: Mapping[Rollout, RolloutScore], *, rounds: Mapping[str, int] | None = None,
              surplus: Sequence[tuple[Example, Sequence[Rollout]]] = ()) -> int:
        """Write step ``step``'s file (replacing one a previous run left); returns its bytes."""
        n = write_dump(dump_path(self.stage_dir, step),
                       self.lines(step, examples, rollouts, scored, rounds=rounds, surplus=surplus))
        self.bytes_written += n
        return n


def rollout_dumper(enabled: bool, stage_dir: str | Path, tokenizer: Decoder, process_index: int, *, start: int
                   ) -> RolloutDumper | None:
    """The dumper of a stage (re)starting at step ``start``, or ``None`` when dumps are off or
    this is not process 0 (every process would otherwise write the same path on a shared
    filesystem). The dumps of ``start`` and later are deleted (:meth:`RolloutDumper.start`)."""
    if not enabled or process_index != 0:
        return None
    dumper = RolloutDumper(stage_dir, tokenizer)
    dumper.start(start)
    return dumper
